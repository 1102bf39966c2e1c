package io.converge.consumer.order;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.consumer.ConsumerOps;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.order.Payments.State;
import io.converge.consumer.spi.ForwardingIdempotentHandler;
import io.converge.outbox.RelayFixture;
import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Per-key order from publish to effect (issue 21), end to end on one backend: {@link #keys()} payments each
 * publish {@code CREATED -> PAID -> REFUNDING -> REFUNDED} in four separate units of work (a ledger row and
 * its message, atomic through the backend's {@code TxnProducer}), interleaved across keys by four writers;
 * the consumer applies them through the idempotent handler and a {@code StateMachine} that refuses illegal
 * transitions. During the run the consumer (or, for the outbox, one of its relays) is restarted, the ack of
 * some handled messages is lost (the binding sees a failure after the commit, so the broker redelivers),
 * and raw copies of delivered messages are republished with their message id through the broker's client.
 * At the end every payment is {@code REFUNDED}, no transition was refused and each message took effect
 * once, in its key's publish order.
 *
 * <p>A backend's IT extends this class, registers its broker's extension and implements the hooks.
 */
@ExtendWith(PostgresExtension.class)
public abstract class KeyOrderEndToEnd {

  /** The deadline of every wait. */
  protected static final Duration WAIT = Duration.ofSeconds(60);
  private static final int WRITERS = 4;
  /** Payments whose PAID message loses its first ack: every {@value}th. */
  private static final int ACK_LOSS_EVERY = 20;
  /** Payments whose CREATED and PAID messages are republished raw: every {@value}th. */
  private static final int COPY_EVERY = 20;
  /** Payments of the parked-message run. */
  private static final int PARKED_RUN_KEYS = 20;

  /** The test class's schema: the publishing and the consuming service's tables, and the backend's. */
  protected static DataSource ds;
  private static Payments payments;
  private static HikariDataSource pool;

  @BeforeAll
  static void schema(DataSource dataSource) throws Exception {
    // pooled, as a service's database is: an unpooled connection per unit of work and per delivery
    // would make the run measure connection set-up
    HikariConfig config = new HikariConfig();
    config.setDataSource(dataSource);
    config.setMaximumPoolSize(16);
    config.setPoolName("order-e2e");
    pool = new HikariDataSource(config);
    ds = pool;
    Migrations.apply(ds, "producer");
    Migrations.apply(ds, "consumer");
    payments = new Payments(ds);
  }

  @AfterAll
  static void closePool() {
    if (pool != null) {
      pool.close();
    }
  }

  /** How many payments the main run publishes. */
  protected int keys() {
    return 200;
  }

  /** A new topic, unique to the caller, created on the broker if the broker needs it. */
  protected abstract String newTopic(String prefix);

  /** The backend's producer on {@code db} (applying the backend's migrations) for {@code topic}. */
  protected abstract TxnProducer producer(DataSource db, String topic) throws Exception;

  /** Starts the binding's consumer of {@code topic} running {@code handler}, consuming when this returns. */
  protected abstract AutoCloseable consume(String topic, IdempotentHandler handler) throws Exception;

  /** Publishes a raw copy of {@code delivered} (its headers, with its message id, key and payload) on {@code topic}. */
  protected abstract void republish(String topic, IncomingMessage delivered) throws Exception;

  /** Starts what carries committed messages from the database to the broker (the outbox relays); none by default. */
  protected AutoCloseable carry(String topic) throws Exception {
    return () -> {
    };
  }

  /** The restart injected in the middle of the run: by default the consumer's. */
  protected void restartMidRun(Consumer consumer) throws Exception {
    consumer.restart();
  }

  /** The consumer of a run: the binding can be stopped and started again on the same group. */
  protected final class Consumer implements AutoCloseable {

    private final String topic;
    private final IdempotentHandler handler;
    private volatile AutoCloseable running;

    private Consumer(String topic, IdempotentHandler handler) throws Exception {
      this.topic = topic;
      this.handler = handler;
      this.running = consume(topic, handler);
    }

    /** Stops the binding (in-flight messages finish or are redelivered) and starts a new one of the same group. */
    public void restart() throws Exception {
      running.close();
      running = consume(topic, handler);
    }

    @Override
    public void close() throws Exception {
      running.close();
    }
  }

  @Test
  void everyKeyIsRefundedInOrderThroughARestartAndRedeliveries() throws Exception {
    int n = keys();
    String topic = newTopic("e2e");
    String run = "p" + UUID.randomUUID().toString().substring(0, 8);
    Set<String> ackToLose = ConcurrentHashMap.newKeySet();
    List<String> copies = new ArrayList<>();
    for (int k = 0; k < n; k++) {
      if (k % ACK_LOSS_EVERY == ACK_LOSS_EVERY / 2) {
        ackToLose.add(key(run, k) + " " + State.PAID);
      }
      if (k % COPY_EVERY == 0) {
        copies.add(key(run, k) + " " + State.CREATED);
        copies.add(key(run, k) + " " + State.PAID);
      }
    }
    int ackLosses = ackToLose.size();
    Map<String, IncomingMessage> delivered = new ConcurrentHashMap<>();
    Map<Outcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    IdempotentHandler real = handler("order-" + run, 3, m -> false);
    IdempotentHandler observed = ForwardingIdempotentHandler.around(real, m -> {
      delivered.putIfAbsent(m.payloadAsString(), m);
      Outcome o = real.handle(m); // committed
      outcomes.computeIfAbsent(o, x -> new AtomicInteger()).incrementAndGet();
      if (o == Outcome.PROCESSED && ackToLose.remove(m.payloadAsString())) {
        throw new IllegalStateException("test: the ack of " + m.payloadAsString() + " is lost");
      }
      return o;
    });
    Map<String, List<String>> published = new ConcurrentHashMap<>();
    long effectsAtRestart;
    try (AutoCloseable carrier = carry(topic);
        Consumer consumer = new Consumer(topic, observed);
        TxnProducer producer = producer(ds, topic)) {
      ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
      List<Future<?>> written = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        written.add(writers.submit(() -> {
          // step by step over this writer's keys: the steps of all keys interleave, each in its own unit of work
          for (State step : State.values()) {
            for (int k = writer; k < n; k += WRITERS) {
              String id = Payments.publish(producer, topic, key(run, k), step);
              published.computeIfAbsent(key(run, k), x -> new ArrayList<>()).add(id);
            }
          }
          return null;
        }));
      }
      writers.shutdown();
      await("a quarter applied").atMost(WAIT).pollInterval(Duration.ofMillis(20))
          .until(() -> writersFailed(written) || effects(run) >= n);
      effectsAtRestart = effects(run);
      restartMidRun(consumer);
      for (String copy : copies) {
        await("delivered: " + copy).atMost(WAIT).until(() -> delivered.containsKey(copy));
        republish(topic, delivered.get(copy));
      }
      for (Future<?> f : written) {
        f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      }
      // a refused transition ends the wait: the assertions below list it
      await().atMost(WAIT).until(() -> !refused(run).isEmpty() || refunded(run) == n);
      await("every payment refunded, every redelivery absorbed").atMost(WAIT).until(() -> !refused(run).isEmpty()
          || refunded(run) == n && duplicates(outcomes) >= copies.size() + ackLosses);
    }
    assertThat(refused(run)).as("refused transitions").isEmpty();
    assertThat(refunded(run)).as("payments refunded").isEqualTo(n);
    assertThat(effectsAtRestart).as("the restart came in the middle of the run").isLessThan(4L * n);
    assertThat(ackToLose).as("every lost ack happened").isEmpty();
    assertThat(duplicates(outcomes)).as("redeliveries absorbed").isGreaterThanOrEqualTo(copies.size() + ackLosses);
    assertThat(count("SELECT count(*) FROM order_ledger WHERE payment_id LIKE '" + run + "-%'")).isEqualTo(4L * n);
    Map<String, String> publishedPerKey = new HashMap<>();
    published.forEach((key, ids) -> publishedPerKey.put(key, String.join(" ", ids)));
    assertThat(effectsPerKey(run)).as("each key's effects once, in its publish order").isEqualTo(publishedPerKey);
  }

  @Test
  void aParkedMessageHoldsItsKeyAndOnlyItsKeyUntilResumed() throws Exception {
    int n = PARKED_RUN_KEYS;
    String topic = newTopic("hold");
    String run = "h" + UUID.randomUUID().toString().substring(0, 8);
    String stuck = key(run, n / 2);
    AtomicBoolean poisoned = new AtomicBoolean(true);
    // the downstream refuses the stuck payment's PAID until a person fixes it: two attempts, then parked
    IdempotentHandler handler = handler("hold-" + run, 2,
        m -> poisoned.get() && Payments.key(m).equals(stuck) && Payments.step(m) == State.PAID);
    Map<String, List<String>> published = new HashMap<>();
    try (AutoCloseable carrier = carry(topic);
        Consumer consumer = new Consumer(topic, handler);
        TxnProducer producer = producer(ds, topic)) {
      for (State step : State.values()) {
        for (int k = 0; k < n; k++) {
          published.computeIfAbsent(key(run, k), x -> new ArrayList<>())
              .add(Payments.publish(producer, topic, key(run, k), step));
        }
      }
      List<String> ofStuck = published.get(stuck);
      await("the others refunded, the stuck one parked with its later two held").atMost(WAIT)
          .until(() -> !refused(run).isEmpty() || refunded(run) == n - 1 && parked(handler.group()).size() == 3);
      assertThat(refused(run)).as("refused transitions").isEmpty();
      assertThat(parked(handler.group())).as("parked: the PAID of %s, its later messages held behind it", stuck)
          .extracting(d -> d.messageId() + " " + d.reasonCode() + (d.reasonCode().equals("HELD") ? ": " + d.reason()
              : ""))
          .containsExactly(ofStuck.get(1) + " RETRIES_EXHAUSTED",
              ofStuck.get(2) + " HELD: behind a parked message of this key",
              ofStuck.get(3) + " HELD: behind a parked message of this key");
      assertThat(states(run)).as("only the stuck key waits").containsEntry(stuck, "CREATED")
          .allSatisfy((key, state) -> assertThat(state).isEqualTo(key.equals(stuck) ? "CREATED" : "REFUNDED"));

      poisoned.set(false); // fixed
      assertThat(handler.resume(parked(handler.group()).get(0).id())).isEqualTo(Outcome.PROCESSED);
      await("the stuck payment refunded").atMost(WAIT).until(() -> !refused(run).isEmpty() || refunded(run) == n);
    }
    assertThat(refused(run)).as("refused transitions").isEmpty();
    assertThat(parked(handler.group())).as("nothing parked after the resume").isEmpty();
    Map<String, String> publishedPerKey = new HashMap<>();
    published.forEach((key, ids) -> publishedPerKey.put(key, String.join(" ", ids)));
    assertThat(effectsPerKey(run)).as("each key's effects once, in its publish order").isEqualTo(publishedPerKey);
  }

  /** The idempotent handler of {@code group} on the test's payments, {@code attempts} per message, short backoffs. */
  protected static IdempotentHandler handler(String group, int attempts, Predicate<IncomingMessage> poisoned) {
    return IdempotentHandler.builder().group(group).dataSource(ds).handler(payments.handler(poisoned))
        .policy(FailurePolicy.defaults().withMaxAttempts(attempts)
            .withBackoff(Duration.ofMillis(5), Duration.ofMillis(20)))
        .build();
  }

  /** Throws the failure of a writer that failed. */
  private static boolean writersFailed(List<Future<?>> writers) throws Exception {
    for (Future<?> f : writers) {
      if (f.isDone()) {
        f.get();
      }
    }
    return false;
  }

  /** Per payment of {@code run}: the ids of the messages that took effect, in the order they did. */
  private static Map<String, String> effectsPerKey(String run) throws Exception {
    return strings(
        "SELECT payment_id, string_agg(message_id, ' ' ORDER BY id) FROM order_effect WHERE payment_id LIKE '"
            + run + "-%' GROUP BY payment_id");
  }

  /** Per payment of {@code run}: its state on the consuming side. */
  private static Map<String, String> states(String run) throws Exception {
    return strings("SELECT id, state FROM order_payment WHERE id LIKE '" + run + "-%'");
  }

  private static Map<String, String> strings(String sql) throws Exception {
    Map<String, String> out = new HashMap<>();
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getString(2));
      }
    }
    return out;
  }

  /** The parked messages of {@code group} (held ones included), oldest first. */
  private static List<ConsumerOps.DeadLetter> parked(String group) {
    return ConsumerOps.of(ds).parked(1000).stream().filter(d -> d.group().equals(group)).toList();
  }

  /** The transitions of {@code run}'s payments the consumer refused. */
  private static List<String> refused(String run) {
    return payments.refused().stream().filter(r -> r.contains(run + "-")).toList();
  }

  private static String key(String run, int k) {
    return run + "-" + k;
  }

  private static long effects(String run) throws Exception {
    return count("SELECT count(*) FROM order_effect WHERE payment_id LIKE '" + run + "-%'");
  }

  private static long refunded(String run) throws Exception {
    return count("SELECT count(*) FROM order_payment WHERE state = 'REFUNDED' AND id LIKE '" + run + "-%'");
  }

  private static int duplicates(Map<Outcome, AtomicInteger> outcomes) {
    AtomicInteger d = outcomes.get(Outcome.DUPLICATE);
    return d == null ? 0 : d.get();
  }

  /** The first column of the first row of {@code sql} on the test's schema. */
  protected static long count(String sql) throws Exception {
    return RelayFixture.scalar(ds, sql);
  }
}
