package io.converge.consumer.spring;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.Unavailability;
import io.converge.outbox.OutboxBackend;
import io.converge.core.DatabaseRefusedException;
import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import io.converge.producer.spring.TransactionalPublisher;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Issue 31.3: an SQL error that the database answered (the connection is fine) is a failure of the unit, not an
 * outage. A handler whose publish through the outbox fails with such an error has the attempt counted and is
 * dead-lettered after the policy's attempts, and the next message runs; main took every {@code SQLException} of a
 * publish for an outage and re-ran the message for ever. Each {@code handle} is bounded, so that main's endless wait
 * fails the test instead of hanging it.
 */
class DatabaseErrorIsAnAttemptIT {

  private static final int ATTEMPTS = 3;
  /** Far more than three fast attempts take; main's outage wait never ends. */
  private static final Duration BOUND = Duration.ofSeconds(15);

  private final ExecutorService runner = Executors.newSingleThreadExecutor();
  private DataSource ds;
  private JdbcTemplate jdbc;
  private TxnProducer producer;
  private TransactionalPublisher publisher;
  private String topic;

  @BeforeEach
  void schema() {
    ds = ConvergePostgres.shared().newSchema("dberr");
    Migrations.apply(ds, "consumer");
    Migrations.apply(ds, "producer");
    Migrations.apply(ds, "outbox");
    jdbc = new JdbcTemplate(ds);
    jdbc.execute("CREATE TABLE orders (id text PRIMARY KEY)");
    topic = "order-events-" + UUID.randomUUID().toString().substring(0, 8);
    producer = TxnProducer.builder().group("orders-" + UUID.randomUUID().toString().substring(0, 8)).dataSource(ds)
        .backend(OutboxBackend.outbox()).topics(topic).build();
    publisher = new TransactionalPublisher(producer, ds);
  }

  @AfterEach
  void close() {
    runner.shutdownNow();
    producer.close();
  }

  /**
   * The handler inserts its order, takes a unique violation for "already known" and publishes anyway: the
   * transaction is aborted, so the outbox insert fails with 25P02. Counted as an attempt, dead-lettered after three;
   * the next message (another key) is processed.
   */
  @Test
  void aHandlerThatCatchesItsOwnUniqueViolationAndPublishesIsDeadLetteredAndTheNextMessageRuns() throws Exception {
    jdbc.update("INSERT INTO orders VALUES ('o-known')");
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler handler = handler(runs, (order, key) -> {
      try {
        jdbc.update("INSERT INTO orders VALUES (?)", order);
      } catch (DuplicateKeyException alreadyKnown) {
        // the handler's own logic: an order seen before is published again; its transaction is aborted now
      }
      return key;
    });
    IncomingMessage failing = message("o-known", "k-1");
    assertThat(bounded(handler, failing, runs)).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(runs).hasValue(ATTEMPTS);
    assertParkedAndNextRuns(handler, failing, "25P02");
  }

  /**
   * The outbox insert waits on the key's advisory lock, held by another transaction, longer than the handler's
   * {@code lock_timeout}: 55P03 is the handler's slow lock, an attempt (the README's word), never an outage.
   */
  @Test
  void aLockTimeoutOnTheOutboxKeysAdvisoryLockCountsAsAnAttempt() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler handler = handler(runs, (order, key) -> {
      jdbc.execute("SET LOCAL lock_timeout = '100ms'");
      return key;
    });
    try (Connection holder = ds.getConnection(); Statement s = holder.createStatement()) {
      holder.setAutoCommit(false);
      s.execute("SELECT pg_advisory_xact_lock(hashtextextended('converge_outbox:' || 'k-locked', 0))");
      IncomingMessage failing = message("o-locked", "k-locked");
      assertThat(bounded(handler, failing, runs)).isEqualTo(Outcome.DEAD_LETTERED);
      assertThat(runs).hasValue(ATTEMPTS);
      holder.rollback();
      assertParkedAndNextRuns(handler, failing, "55P03");
    }
  }

  /**
   * A {@code COMMIT} the database refused (a deferred unique constraint, 23505) committed nothing: a
   * {@link DatabaseRefusedException} with its SQLState, neither an outage nor an unknown outcome, so the
   * Idempotency-Key filter stores the 500 the README promises instead of releasing the key for ever (main threw a
   * {@code CommitOutcomeUnknownException}, a {@code DatabaseUnavailableException}).
   */
  @Test
  void aCommitRefusedForADeferredConstraintIsARefusalNotAnOutage() {
    jdbc.execute("CREATE TABLE payments (id text, CONSTRAINT payments_once UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)");
    String id = MessageIds.shared().next();
    assertThatThrownBy(() -> producer.inTransaction(tx -> {
      try (Statement s = tx.connection().createStatement()) {
        s.execute("INSERT INTO payments VALUES ('p-1'), ('p-1')");
      }
      return tx.publish(OutgoingMessage.builder(topic).id(id).key("p-1").payload("paid".getBytes(UTF_8)).build());
    })).isInstanceOfSatisfying(DatabaseRefusedException.class, e -> {
      assertThat(e.sqlState()).isEqualTo("23505");
      assertThat(e.messageId()).isEqualTo(id);
      assertThat(Unavailability.isUnavailability(e)).as("released by the filter").isFalse();
      assertThat(Unavailability.isCommitOutcomeUnknown(e)).isFalse();
    });
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_outbox WHERE topic = ?", Long.class, topic))
        .isZero();
  }

  /** What the handler does before it publishes on the key it returns. */
  @FunctionalInterface
  private interface BeforePublish {

    String run(String order, String key) throws Exception;
  }

  private IdempotentHandler handler(AtomicInteger runs, BeforePublish before) {
    return IdempotentHandler.builder().group("dberr-" + UUID.randomUUID().toString().substring(0, 8))
        .transactions(new SpringTransactionRunner(new DataSourceTransactionManager(ds), ds))
        .policy(FailurePolicy.defaults().withMaxAttempts(ATTEMPTS)
            .withBackoff(Duration.ofMillis(5), Duration.ofMillis(20)).withMaxOutageBackoff(Duration.ofMillis(100)))
        .handler((c, m) -> {
          runs.incrementAndGet();
          String order = m.payloadAsString();
          String key = before.run(order, m.brokerKey());
          publisher.publish(OutgoingMessage.builder(topic).id(MessageIds.shared().next()).key(key)
              .header("order", order).payload(("created " + order).getBytes(UTF_8)).build());
        }).build();
  }

  private static IncomingMessage message(String order, String key) {
    return IncomingMessage.builder().topic("orders").header(Envelope.MESSAGE_ID, UUID.randomUUID().toString())
        .brokerKey(key).payload(order).build();
  }

  /** {@code handler.handle(m)}, failing the test when it has not returned within {@link #BOUND}. */
  private Outcome bounded(IdempotentHandler handler, IncomingMessage m, AtomicInteger runs) throws Exception {
    Future<Outcome> outcome = runner.submit(() -> handler.handle(m));
    try {
      return outcome.get(BOUND.toSeconds(), TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      outcome.cancel(true); // the outage wait ends on an interrupt
      throw new AssertionError("handle() still running after " + BOUND + " and " + runs.get()
          + " runs: the failure was waited out as an outage, no attempt counted", e);
    }
  }

  /**
   * {@code failing} is in the dead-letter table, its reason naming {@code sqlState}, and nothing of it was published;
   * the next message runs.
   */
  private void assertParkedAndNextRuns(IdempotentHandler handler, IncomingMessage failing, String sqlState)
      throws Exception {
    String id = failing.envelopeMessageId();
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_dlq WHERE message_id = ?", Long.class, id))
        .isEqualTo(1);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_consumer_attempt WHERE message_id = ?", Long.class,
        id)).as("attempts still open").isZero();
    assertThat(jdbc.queryForObject("SELECT reason_code || ' ' || reason FROM converge_dlq WHERE message_id = ?",
        String.class, id)).startsWith("RETRIES_EXHAUSTED").contains("SQLState " + sqlState);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_outbox WHERE topic = ?", Long.class, topic))
        .isZero();
    AtomicInteger runs = new AtomicInteger();
    assertThat(bounded(handler, message("o-next", "k-next"), runs)).isEqualTo(Outcome.PROCESSED);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_outbox WHERE topic = ?", Long.class, topic))
        .isEqualTo(1);
  }
}
