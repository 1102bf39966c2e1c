package io.converge.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.Ports;
import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.BrokerUnavailableException;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.Envelope;
import io.converge.core.InvalidMessageException;
import io.converge.core.LateCommitFencedException;
import io.converge.core.MessageIds;
import io.converge.core.MessageSignature;
import io.converge.core.SigningKeys;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.PayloadTooLargeException;
import io.converge.producer.TxnProducer;
import io.converge.producer.UnitOfWorkException;
import io.converge.core.Migrations;
import io.converge.producer.internal.CrashPoints;
import io.converge.producer.spring.TransactionalPublisher;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The contract every {@link TxnProducer} backend must pass, against real servers: a message is
 * delivered (at least once) if and only if its local transaction commits, whatever crashes.
 * Subclasses provide the backend, a consumer and broker control. Duplicates are allowed everywhere:
 * deliveries are counted by message id.
 *
 * <p>No test is meant to be overridden: a backend declares where an open unit's messages are
 * ({@link Staging}) and the factory of its crash tests' child JVM through the constructor, and the
 * contract runs the tests that apply.
 */
@ExtendWith(ChildJvmExtension.class)
@Execution(ExecutionMode.SAME_THREAD)
public abstract class TxnProducerContract {

  /**
   * The contract's tests run concurrently with each other (each is {@code @Execution(CONCURRENT)}: own
   * topics, groups and ids; most of their time is spent waiting for the broker), except those that take the
   * whole broker down or install the JVM-wide crash hook: they hold this resource exclusively, the others
   * share it. The class itself is SAME_THREAD, so it never overlaps another test class of the module (one
   * that shares the broker a contract test stops, or that assumes it runs alone).
   */
  static final String ALONE = "converge.contract.broker-and-crash-hook";

  /** One child JVM at a time: starting several at once starves the broker of the CPU. */
  static final String CHILD = "converge.contract.child-jvm";

  static final String INSERT_ORDER = "INSERT INTO contract_orders (id, note) VALUES (?, ?)";

  /** Where the messages of an open unit of work are, which decides the tests that apply. */
  protected enum Staging {
    /**
     * Prepared on the broker (RocketMQ half message, Pulsar transaction): recovery may discard a message
     * while its unit is still open (case 5), and a broker outage fails the unit.
     */
    BROKER,
    /**
     * In the database only (outbox): the unit commits during a broker outage, and an open unit's row must
     * not be overtaken by later ones (case 5b).
     */
    DATABASE
  }

  private final Staging staging;
  private final Class<? extends ChildProducerFactory> childFactory;

  /**
   * @param staging where the backend keeps an open unit's messages
   * @param childFactory the factory the crash tests' child JVM uses to build the same producer
   */
  protected TxnProducerContract(Staging staging, Class<? extends ChildProducerFactory> childFactory) {
    this.staging = Objects.requireNonNull(staging, "staging");
    this.childFactory = Objects.requireNonNull(childFactory, "childFactory");
  }

  /** The database of this test class: a fresh schema with the producer migrations and a business table. */
  protected DataSource db;
  private String schema;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  // ---- what a backend provides ----

  /** A new producer instance of {@code group}, declaring {@code topic}, on {@code db}. */
  protected abstract TxnProducer newProducer(String group, String topic, DataSource db);

  /** The broker: topics, outage. */
  protected abstract ContractBroker broker();

  /** Starts recording deliveries on {@code topic}. */
  protected abstract MessageSink consume(String topic);

  /** What the child's factory needs (broker addresses); none by default. */
  protected Map<String, String> childEnv() {
    return Map.of();
  }

  /** How long recovery (check-back, relay, recovery scan) may take to resolve an open message. */
  protected abstract Duration recoveryWindow();

  private boolean reachesBrokerInUnitOfWork() {
    return staging == Staging.BROKER;
  }

  // ---- fixtures ----

  /**
   * One schema per backend's test class, not per test (JUnit makes an instance per test): every test
   * uses its own topics, groups and ids, and a schema with its migrations costs seconds.
   */
  @BeforeEach
  void schema() {
    Schema s = SCHEMAS.computeIfAbsent(getClass(), c -> {
      try {
        return newSchema();
      } catch (Exception e) {
        throw new IllegalStateException("cannot create the contract's schema", e);
      }
    });
    db = s.db();
    schema = s.name();
  }

  private static final Map<Class<?>, Schema> SCHEMAS = new java.util.concurrent.ConcurrentHashMap<>();

  private record Schema(DataSource db, String name) {
  }

  private static Schema newSchema() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("contract");
    String name;
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_schema()")) {
      rs.next();
      name = rs.getString(1);
      s.execute("CREATE TABLE contract_orders (id text PRIMARY KEY, note text NOT NULL)");
    }
    Migrations.apply(ds, "producer");
    return new Schema(ds, name);
  }

  private static final java.util.Set<List<Object>> MIGRATED = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /**
   * Applies {@code module}'s migrations to {@code db} once per test JVM (a backend whose producer needs more
   * tables than the contract's schema has; the contract's tests run concurrently). The crash tests' child
   * factories apply them on every call instead.
   */
  protected static void migrateOnce(DataSource db, String module) {
    synchronized (MIGRATED) {
      if (!MIGRATED.contains(List.of(db, module))) {
        Migrations.apply(db, module);
        MIGRATED.add(List.of(db, module));
      }
    }
  }

  /**
   * Closes the test's producers and sinks off the test thread: a RocketMQ client takes up to 3 s to shut
   * down, which the next test need not wait for (it uses its own topics and groups). {@link #awaitClosed()}
   * waits for every close of the class, and fails it when one failed.
   */
  @AfterEach
  void closeAll() {
    CrashPoints.install(null);
    List<AutoCloseable> toClose = new ArrayList<>(closeables);
    java.util.Collections.reverse(toClose);
    closeables.clear();
    CLOSING.add(CLOSER.submit(() -> {
      for (AutoCloseable c : toClose) {
        c.close();
      }
      return null;
    }));
  }

  private static final java.util.concurrent.ExecutorService CLOSER = java.util.concurrent.Executors
      .newCachedThreadPool(r -> {
        Thread t = new Thread(r, "contract-close");
        t.setDaemon(true);
        return t;
      });
  private static final List<java.util.concurrent.Future<?>> CLOSING = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Waits for the closes {@link #closeAll()} started; a close that failed fails the class. */
  @AfterAll
  static void awaitClosed() throws Exception {
    try {
      for (java.util.concurrent.Future<?> f : CLOSING) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      CLOSING.clear();
    }
  }

  private String topic(String prefix) {
    String topic = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    broker().createTopic(topic);
    return topic;
  }

  private String group(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private TxnProducer producer(String group, String topic) {
    TxnProducer p = newProducer(group, topic, db);
    closeables.add(p);
    return p;
  }

  private MessageSink sink(String topic) {
    MessageSink s = consume(topic);
    closeables.add(s);
    return s;
  }

  private static OutgoingMessage message(String topic, String id, String note) {
    return message(topic, id, note, "order-" + id.substring(0, 8));
  }

  private static OutgoingMessage message(String topic, String id, String note, String key) {
    return OutgoingMessage.builder(topic).id(id).key(key).header("note", note).payload(note.getBytes(UTF_8)).build();
  }

  private String order(TxnProducer p, String topic, String note) {
    String id = MessageIds.shared().next();
    p.inTransaction(tx -> {
      insertOrder(tx.connection(), id, note);
      return tx.publish(message(topic, id, note));
    });
    return id;
  }

  private static void insertOrder(Connection c, String id, String note) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(INSERT_ORDER)) {
      ps.setString(1, id);
      ps.setString(2, note);
      ps.executeUpdate();
    }
  }

  protected boolean orderExists(String id) throws Exception {
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT 1 FROM contract_orders WHERE id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Waits until every id in {@code ids} was delivered at least once. */
  protected static List<Delivered> awaitDelivered(MessageSink sink, Set<String> ids, Duration timeout) {
    return await("delivery of " + ids).atMost(timeout).pollInterval(Duration.ofMillis(20))
        .until(() -> sink.received().stream().filter(d -> ids.contains(d.id())).toList(),
            matching -> matching.stream().map(Delivered::id).collect(Collectors.toSet()).containsAll(ids));
  }

  /**
   * Publishes a committed marker and waits for it, then watches for {@code extra} that none of {@code never} is
   * delivered (failing at the first that is). Afterwards nothing published before the marker can still be on its
   * way, and recovery had at least the marker's round trip plus {@code extra} to deliver one of them.
   */
  private void settle(Unit u, Duration extra, String... never) throws Exception {
    Set<String> forbidden = Set.of(never);
    settle(u, extra, "none of " + forbidden + " delivered",
        () -> ids(u.sink()).stream().noneMatch(forbidden::contains));
  }

  /**
   * As {@link #settle(Unit, Duration, String...)}, watching that {@code invariant} holds for {@code extra} after
   * the marker arrived. The window starts only then, so that it stretches with the load of the machine: a broker
   * slowed down enough to delay the marker may delay a forbidden recovery as much.
   */
  private void settle(Unit u, Duration extra, String what, java.util.concurrent.Callable<Boolean> invariant)
      throws Exception {
    String marker = order(u.p(), u.topic(), "marker");
    awaitDelivered(u.sink(), Set.of(marker), Duration.ofSeconds(60));
    if (extra.isZero()) {
      assertThat(invariant.call()).as("recovery window: " + what).isTrue();
    } else {
      await("recovery window: " + what).during(extra).atMost(extra.plusSeconds(5)).pollInterval(Duration.ofMillis(50))
          .until(invariant);
    }
  }

  private static Set<String> ids(MessageSink sink) {
    return sink.received().stream().map(Delivered::id).collect(Collectors.toSet());
  }

  /** The set-up of most tests: a new topic, a producer of a new group declaring it, deliveries on it. */
  private record Unit(String topic, TxnProducer p, MessageSink sink) {
  }

  private Unit unit(String prefix) {
    String topic = topic(prefix);
    TxnProducer p = producer(group("g"), topic);
    return new Unit(topic, p, sink(topic));
  }

  /** A {@link TransactionalPublisher} in Spring transactions on {@link #db}: an outer one and an inner one. */
  private record Spring(TransactionalPublisher publisher, TransactionTemplate outer, TransactionTemplate inner,
      JdbcTemplate jdbc) {

    /** Writes order {@code id} and publishes its message in the current Spring transaction. */
    void write(String topic, String id, String note) {
      jdbc.update(INSERT_ORDER, id, note);
      publisher.publish(message(topic, id, note));
    }
  }

  private Spring spring(TxnProducer p, int innerPropagation) {
    DataSourceTransactionManager tm = new DataSourceTransactionManager(db);
    TransactionTemplate inner = new TransactionTemplate(tm);
    inner.setPropagationBehavior(innerPropagation);
    return new Spring(new TransactionalPublisher(p, db), new TransactionTemplate(tm), inner, new JdbcTemplate(db));
  }

  /** The distinct payloads delivered for message {@code id}. */
  private static List<String> payloads(MessageSink sink, String id) {
    return sink.received().stream().filter(d -> d.id().equals(id)).map(d -> new String(d.payload(), UTF_8)).distinct()
        .toList();
  }

  /** Commits a unit that writes order {@code id} and publishes message {@code id} with {@code note} as its payload. */
  private static void publishOrder(TxnProducer p, String topic, String id, String note) {
    p.inTransaction(tx -> {
      insertOrder(tx.connection(), id, note);
      return tx.publish(message(topic, id, note));
    });
  }

  // ---- 1. commit ----

  /**
   * Commit: the message is delivered and the business row kept. Published under a caller's span (the tracing of
   * issue 34), the delivered {@code traceparent} continues the publish span, itself a child of the caller's: one
   * case, so that the tracing costs the suite no second delivery per backend.
   */
  @ContractTest
  void commitDeliversTheMessageWithItsTraceAndKeepsTheBusinessRow() throws Exception {
    Unit u = unit("commit");
    try (GlobalSpans spans = GlobalSpans.install()) {
      Span request = spans.tracer().spanBuilder("POST /orders").startSpan();
      String id;
      try (Scope ignored = request.makeCurrent()) {
        id = order(u.p(), u.topic(), "committed");
      } finally {
        request.end();
      }
      assertThat(orderExists(id)).isTrue();
      Delivered d = awaitDelivered(u.sink(), Set.of(id), Duration.ofSeconds(60)).get(0);
      assertThat(new String(d.payload(), UTF_8)).isEqualTo("committed");
      SpanData publish = spans.trace(request.getSpanContext().getTraceId()).stream()
          .filter(s -> s.getKind() == SpanKind.PRODUCER).findFirst().orElseThrow();
      assertThat(publish.getName()).isIn("publish " + u.topic(), "create " + u.topic());
      assertThat(publish.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
      assertThat(d.headers()).containsEntry(Envelope.TRACEPARENT,
          "00-" + publish.getTraceId() + "-" + publish.getSpanId() + "-01");
    }
  }

  // ---- 2. rollback ----

  @ContractTest
  void exceptionInTheUnitOfWorkRollsBackRowAndMessage() throws Exception {
    Unit u = unit("rollback");
    String topic = u.topic();
    String id = MessageIds.shared().next();
    assertThatThrownBy(() -> u.p().inTransaction(tx -> {
      insertOrder(tx.connection(), id, "doomed");
      tx.publish(message(topic, id, "doomed"));
      throw new IllegalStateException("business rule violated");
    })).isInstanceOf(IllegalStateException.class).hasMessage("business rule violated");
    assertThat(orderExists(id)).isFalse();

    // a business write that fails (a checked SQLException: duplicate key) rolls back the same way
    String existing = order(u.p(), topic, "first");
    String duplicateMessage = MessageIds.shared().next();
    assertThatThrownBy(() -> u.p().inTransaction(tx -> {
      tx.publish(message(topic, duplicateMessage, "duplicate"));
      insertOrder(tx.connection(), existing, "duplicate key");
      return null;
    })).isInstanceOf(UnitOfWorkException.class)
        .hasCauseInstanceOf(java.sql.SQLException.class)
        .satisfies(e -> assertThat(((UnitOfWorkException) e).messageId()).isEqualTo(duplicateMessage));

    settle(u, recoveryWindow(), id, duplicateMessage);
    assertThat(ids(u.sink())).doesNotContain(id, duplicateMessage);
  }

  // ---- 3. kill -9 after the DB commit, before the broker commit ----

  @CrashTest
  void killAfterDbCommitBeforeBrokerCommitIsDeliveredByRecovery(ChildJvms jvms) throws Exception {
    CrashUnit c = crashUnit("crash-after");
    runChildUntilCrash(jvms, CrashPoints.Point.AFTER_DB_COMMIT, c);
    assertThat(orderExists(c.id())).as("the DB committed before the crash").isTrue();
    producer(c.group(), c.topic()); // a new instance of the same group answers for the dead one
    Delivered d = awaitDelivered(c.sink(), Set.of(c.id()), recoveryWindow().plusSeconds(30)).get(0);
    // the check-back commit, the Pulsar recovery, the relay's send: the trace current at publish goes on
    assertThat(d.headers()).containsEntry(Envelope.TRACEPARENT, ChildProducerMain.traceparent(c.id()));
  }

  // ---- 4. kill -9 before the DB commit ----

  @CrashTest
  void killBeforeDbCommitIsNeverDelivered(ChildJvms jvms) throws Exception {
    CrashUnit c = crashUnit("crash-before");
    runChildUntilCrash(jvms, CrashPoints.Point.BEFORE_DB_COMMIT, c);
    TxnProducer heir = producer(c.group(), c.topic());
    settle(new Unit(c.topic(), heir, c.sink()), recoveryWindow(), c.id());
    assertThat(orderExists(c.id())).isFalse();
    assertThat(ids(c.sink())).doesNotContain(c.id());
  }

  // ---- 4b. a retry with the same message id after a crashed attempt (issue 13.10) ----

  /**
   * The application supplies its own message id and retries a unit whose first attempt died before
   * its DB commit (kill -9: that attempt's broker-side state was never ended). The retry commits with
   * the same id and another payload. Only the retry's message may be delivered: recovery must match
   * the exact attempt, not the id (on RocketMQ the dead attempt's half message is checked back and
   * must be rolled back although a committed row of its id exists), and must not refuse the retry
   * because recovery already discarded the dead attempt.
   */
  @CrashTest
  void aRetryWithTheSameIdAfterACrashedAttemptDeliversOnlyTheRetry(ChildJvms jvms) throws Exception {
    retryAfterACrashedAttempt(jvms, "retry", false);
  }

  /**
   * As above, but the retry comes after recovery already discarded the dead attempt: on RocketMQ the
   * check-back fenced its id (ROLLED_BACK row of that attempt), on Pulsar the broker aborted its
   * transaction at the timeout; the outbox has nothing on the broker to discard (the dead attempt's row
   * died with its transaction). The retry with the same id must commit (not be refused as a late
   * commit of the fenced attempt for the whole log retention) and only its payload may be delivered.
   */
  @CrashTest
  void aRetryWithTheSameIdAfterRecoveryDiscardedTheCrashedAttemptCommits(ChildJvms jvms) throws Exception {
    retryAfterACrashedAttempt(jvms, "refenced", true);
  }

  /**
   * A child crashes before its DB commit; a producer of the same group, started before the crash,
   * retries the unit with the same id (after recovery discarded the dead attempt when
   * {@code afterDiscard}); only the retry's payload is delivered.
   */
  private void retryAfterACrashedAttempt(ChildJvms jvms, String prefix, boolean afterDiscard) throws Exception {
    CrashUnit c = crashUnit(prefix);
    String topic = c.topic();
    MessageSink sink = c.sink();
    String id = c.id();
    TxnProducer heir = producer(c.group(), topic); // started first: the retry follows the crash at once
    runChildUntilCrash(jvms, CrashPoints.Point.BEFORE_DB_COMMIT, c);
    if (afterDiscard && reachesBrokerInUnitOfWork()) {
      awaitDiscarded(id);
    }
    publishOrder(heir, topic, id, "retry");
    if (afterDiscard) {
      assertThat(orderExists(id)).as("the retry committed").isTrue();
    }
    awaitDelivered(sink, Set.of(id), Duration.ofSeconds(60));
    settle(new Unit(topic, heir, sink), recoveryWindow().plusSeconds(2), "only the retry's payload delivered",
        () -> payloads(sink, id).equals(List.of("retry")));
    assertThat(payloads(sink, id)).as("payloads delivered for message %s", id).containsExactly("retry");
  }

  // ---- 5. a local commit after recovery discarded the message ----

  /** Only where the broker holds a prepared message ({@link Staging#BROKER}); else see 5b. */
  @Test
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = ALONE, mode = ResourceAccessMode.READ_WRITE)
  void localCommitAfterRecoveryDiscardedTheMessageFails() throws Exception {
    assumeThat(reachesBrokerInUnitOfWork())
        .as("nothing is prepared on the broker: no recovery can discard an open unit (see 5b)")
        .isTrue();
    Unit u = unit("late");
    String id = MessageIds.shared().next();
    CrashPoints.install(point -> {
      if (point == CrashPoints.Point.AFTER_BROKER_PREPARE) {
        awaitDiscarded(id); // the application stalls past the local-transaction timeout
      }
    });
    assertThatThrownBy(() -> publishOrder(u.p(), u.topic(), id, "late"))
        .isInstanceOf(LateCommitFencedException.class)
        .satisfies(e -> assertThat(((LateCommitFencedException) e).messageId()).isEqualTo(id));
    CrashPoints.install(null);
    assertThat(orderExists(id)).isFalse();
    settle(u, recoveryWindow(), id);
    assertThat(ids(u.sink())).doesNotContain(id);
  }

  /** Blocks until recovery has decided that message {@code id} is rolled back; only called where {@link Staging#BROKER}. */
  protected abstract void awaitDiscarded(String id);

  // ---- 5b. an open unit is neither delivered before its commit nor lost after it ----

  /**
   * Case 5 has no meaning where nothing is prepared on the broker (the outbox): no recovery can discard
   * a message while its transaction is still open. The outbox's equivalent risk is the opposite: a slow
   * transaction whose row gets a lower seq than rows committed after it. A relay that moved a
   * high-water mark past it would lose it. Here the slow unit stays open while later units (another
   * key) commit and are delivered; the slow message must not be delivered before its commit, and must
   * be delivered after it.
   */
  @ContractTest
  void anOpenUnitIsNeitherDeliveredBeforeItsCommitNorLostAfterIt() throws Exception {
    assumeThat(reachesBrokerInUnitOfWork())
        .as("a unit that reaches the broker is bounded by its local-transaction timeout (see 5)")
        .isFalse();
    Unit u = unit("slow");
    String topic = u.topic();
    String slow = MessageIds.shared().next();
    String fast = MessageIds.shared().next();
    CountDownLatch written = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<String> slowUnit = CompletableFuture.supplyAsync(() -> u.p().inTransaction(tx -> {
      tx.publish(OutgoingMessage.builder(topic).id(slow).key("slow").payload("slow".getBytes(UTF_8)).build());
      written.countDown();
      release.await(30, TimeUnit.SECONDS);
      return slow;
    }));
    assertThat(written.await(10, TimeUnit.SECONDS)).isTrue();
    u.p().inTransaction(
        tx -> tx.publish(OutgoingMessage.builder(topic).id(fast).key("fast").payload("fast".getBytes(UTF_8)).build()));
    awaitDelivered(u.sink(), Set.of(fast), Duration.ofSeconds(30));
    settle(u, recoveryWindow(), slow); // several relay polls while the slow row is uncommitted
    assertThat(ids(u.sink())).as("an uncommitted row is never published").doesNotContain(slow);
    release.countDown();
    assertThat(slowUnit.get(30, TimeUnit.SECONDS)).isEqualTo(slow);
    awaitDelivered(u.sink(), Set.of(slow), Duration.ofSeconds(30));
  }

  // ---- 6. several messages: all or none; envelope preserved, signed with a schema (issue 34) ----

  /**
   * Several messages of a unit are delivered all or none, each with its id, key, tenant and headers intact. They name
   * a schema ({@code converge-schema}) and are signed ({@code signedWith}, what {@code TxnProducerBuilder.sign} does to
   * every message, over the envelope the backend stamps): each signature verifies on the consumer's side
   * ({@link MessageSignature#verify}, what {@code IdempotentHandler.Builder.requireSignature} runs).
   */

  @ContractTest
  void severalMessagesAreAllOrNoneWithIdKeyAndHeadersPreserved() throws Exception {
    Unit u = unit("many");
    String topic = u.topic();
    List<String> committed = List.of(MessageIds.shared().next(), MessageIds.shared().next(),
        MessageIds.shared().next());
    SigningKeys keys = SigningKeys.of("k1", Map.of("k1", "contract-signing-key-of-32-bytes".getBytes(UTF_8)));
    u.p().inTransaction(tx -> {
      for (String id : committed) {
        insertOrder(tx.connection(), id, "many");
        tx.publish(OutgoingMessage.builder(topic).id(id).key("customer-7").tenant("acme").schema("order-created", 2, 1)
            .header("trace-note", "n-" + id).payload(id.getBytes(UTF_8)).build().signedWith(keys));
      }
      return null;
    });
    List<String> rolledBack = List.of(MessageIds.shared().next(), MessageIds.shared().next(),
        MessageIds.shared().next());
    assertThatThrownBy(() -> u.p().inTransaction(tx -> {
      for (String id : rolledBack) {
        insertOrder(tx.connection(), id, "none");
        tx.publish(message(topic, id, "none"));
      }
      throw new IllegalStateException("third message's business check failed");
    })).isInstanceOf(IllegalStateException.class);

    List<Delivered> delivered = assertOnlyCommittedDelivered(u, Set.copyOf(committed), "rolled back with the unit",
        rolledBack.toArray(String[]::new));
    for (Delivered d : delivered) {
      assertThat(d.key()).isEqualTo("customer-7");
      assertThat(d.headers()).containsEntry(Envelope.MESSAGE_ID, d.id())
          .containsEntry(Envelope.KEY, "customer-7")
          .containsEntry(Envelope.TENANT, "acme")
          .containsEntry("trace-note", "n-" + d.id())
          .containsEntry(Envelope.SCHEMA, "order-created/2.1")
          .containsKey(Envelope.SOURCE)
          .containsKey(Envelope.CREATED_AT);
      assertThat(new String(d.payload(), UTF_8)).isEqualTo(d.id());
      MessageSignature.verify(keys, topic, d.headers(), d.payload());
    }
  }

  // ---- 6b. savepoints: what a rolled-back savepoint covered is never delivered (issue 13.1) ----

  /**
   * A JDBC savepoint on the unit's connection: publish A, savepoint, publish B, roll back to the
   * savepoint, publish C, commit. A and C are delivered, B never: not by the commit, not by recovery
   * (the test waits past the recovery window, e.g. RocketMQ check-backs of B's half message), and
   * B's business row is gone with the savepoint. A second savepoint taken before any publish and
   * rolled back discards everything published after it.
   */
  @ContractTest
  void aRolledBackSavepointDiscardsTheMessagesPublishedAfterIt() throws Exception {
    Unit u = unit("savepoint");
    String topic = u.topic();
    String a = MessageIds.shared().next();
    String b = MessageIds.shared().next();
    String c = MessageIds.shared().next();
    u.p().inTransaction(tx -> {
      insertOrder(tx.connection(), a, "a");
      tx.publish(message(topic, a, "a"));
      java.sql.Savepoint sp = tx.connection().setSavepoint();
      insertOrder(tx.connection(), b, "b");
      tx.publish(message(topic, b, "b"));
      tx.connection().rollback(sp);
      insertOrder(tx.connection(), c, "c");
      return tx.publish(message(topic, c, "c"));
    });
    String d = MessageIds.shared().next();
    String e = MessageIds.shared().next();
    u.p().inTransaction(tx -> {
      java.sql.Savepoint sp = tx.connection().setSavepoint(); // before the first publish
      insertOrder(tx.connection(), d, "d");
      tx.publish(message(topic, d, "d"));
      tx.connection().rollback(sp);
      insertOrder(tx.connection(), e, "e");
      return tx.publish(message(topic, e, "e"));
    });
    assertOnlyCommittedDelivered(u, Set.of(a, c, e), "published after a rolled-back savepoint", b, d);
  }

  /**
   * Waits for {@code delivered}, then past the recovery window; asserts that none of {@code never}
   * was delivered and that their business rows are gone. Returns the deliveries of {@code delivered}.
   */
  private List<Delivered> assertOnlyCommittedDelivered(Unit u, Set<String> delivered, String what, String... never)
      throws Exception {
    List<Delivered> arrived = awaitDelivered(u.sink(), delivered, Duration.ofSeconds(60));
    settle(u, recoveryWindow(), never);
    assertThat(ids(u.sink())).as(what).doesNotContain(never);
    for (String id : never) {
      assertThat(orderExists(id)).isFalse();
    }
    return arrived;
  }

  /**
   * The same through Spring: {@link TransactionalPublisher} inside a {@code DataSourceTransactionManager}
   * transaction with a {@code PROPAGATION_NESTED} inner transaction (a savepoint) that fails. The
   * first outer transaction publishes before the savepoint, the second only inside it.
   */
  @ContractTest
  void aRolledBackSpringNestedTransactionDiscardsItsMessages() throws Exception {
    Unit u = unit("nested");
    String topic = u.topic();
    Spring spring = spring(u.p(), TransactionDefinition.PROPAGATION_NESTED);
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ids.add(MessageIds.shared().next());
    }
    String a = ids.get(0), b = ids.get(1), c = ids.get(2), d = ids.get(3), e = ids.get(4);
    spring.outer().executeWithoutResult(s -> {
      spring.write(topic, a, "a");
      assertThatThrownBy(() -> spring.inner().executeWithoutResult(n -> {
        spring.write(topic, b, "b");
        throw new IllegalStateException("inner business rule violated");
      })).hasMessage("inner business rule violated");
      spring.inner().executeWithoutResult(n -> spring.write(topic, c, "c"));
    });
    spring.outer().executeWithoutResult(s -> {
      assertThatThrownBy(() -> spring.inner().executeWithoutResult(n -> {
        spring.write(topic, d, "d"); // the first publish of the outer transaction
        throw new IllegalStateException("inner business rule violated");
      })).hasMessage("inner business rule violated");
      spring.write(topic, e, "e");
    });
    assertOnlyCommittedDelivered(u, Set.of(a, c, e), "published in a rolled-back nested transaction", b, d);
    assertThat(orderExists(c)).isTrue();
  }

  /**
   * A {@code PROPAGATION_REQUIRES_NEW} transaction inside another is a unit of its own: its message is
   * delivered when it commits although the outer transaction then rolls back, and the outer one's
   * message is not.
   */
  @ContractTest
  void aSpringRequiresNewTransactionIsItsOwnUnitOfWork() throws Exception {
    Unit u = unit("requiresnew");
    String topic = u.topic();
    Spring spring = spring(u.p(), TransactionDefinition.PROPAGATION_REQUIRES_NEW);
    String before = MessageIds.shared().next();
    String own = MessageIds.shared().next();
    // two orders, two keys (message() keys by the id's time prefix: these two would share one)
    assertThatThrownBy(() -> spring.outer().executeWithoutResult(s -> {
      spring.jdbc().update(INSERT_ORDER, before, "outer");
      spring.publisher().publish(message(topic, before, "outer", "outer-" + before));
      spring.inner().executeWithoutResult(n -> {
        spring.jdbc().update(INSERT_ORDER, own, "inner");
        spring.publisher().publish(message(topic, own, "inner", "inner-" + own));
      });
      throw new IllegalStateException("outer business rule violated");
    })).hasMessage("outer business rule violated");
    assertThat(orderExists(own)).isTrue();
    assertThat(orderExists(before)).isFalse();
    awaitDelivered(u.sink(), Set.of(own), Duration.ofSeconds(60));
    settle(u, recoveryWindow(), before);
    assertThat(ids(u.sink())).doesNotContain(before);
  }

  // ---- 7. broker down, DB down ----

  @Test
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = ALONE, mode = ResourceAccessMode.READ_WRITE)
  void brokerDown() throws Exception {
    Unit u = unit("down");
    order(u.p(), u.topic(), "warm-up"); // routes known
    String id = MessageIds.shared().next();
    broker().stop();
    try {
      if (reachesBrokerInUnitOfWork()) {
        assertThatThrownBy(() -> publishOrder(u.p(), u.topic(), id, "broker-down"))
            .isInstanceOf(BrokerUnavailableException.class)
            .satisfies(e -> assertThat(((BrokerUnavailableException) e).messageId()).isEqualTo(id));
        assertThat(orderExists(id)).isFalse();
      } else {
        publishOrder(u.p(), u.topic(), id, "broker-down");
        assertThat(orderExists(id)).isTrue();
      }
    } finally {
      broker().start();
    }
    if (!reachesBrokerInUnitOfWork()) {
      awaitDelivered(u.sink(), Set.of(id), recoveryWindow().plusSeconds(60));
    } else {
      settle(u, recoveryWindow(), id);
      assertThat(ids(u.sink())).doesNotContain(id);
    }
  }

  @ContractTest
  void databaseDownIsATypedErrorAndNothingIsSent() throws Exception {
    String topic = topic("dbdown");
    PGSimpleDataSource nowhere = new PGSimpleDataSource();
    nowhere.setUrl("jdbc:postgresql://127.0.0.1:" + Ports.free() + "/postgres?connectTimeout=2");
    TxnProducer healthy = producer(group("g"), topic);
    TxnProducer broken = newProducer(group("g"), topic, nowhere);
    closeables.add(broken);
    MessageSink sink = sink(topic);
    String id = MessageIds.shared().next();
    assertThatThrownBy(() -> broken.inTransaction(tx -> tx.publish(message(topic, id, "db-down"))))
        .isInstanceOf(DatabaseUnavailableException.class);
    settle(new Unit(topic, healthy, sink), Duration.ZERO);
    assertThat(ids(sink)).doesNotContain(id);
  }

  // ---- 8. bad input before anything is sent ----

  @ContractTest
  void oversizePayloadAndBadTopicAreTypedErrorsBeforeAnythingIsSent() throws Exception {
    Unit u = unit("bad");
    String id = MessageIds.shared().next();
    byte[] huge = new byte[5 * 1024 * 1024];
    assertThatThrownBy(() -> u.p().inTransaction(tx -> {
      insertOrder(tx.connection(), id, "huge");
      return tx.publish(OutgoingMessage.builder(u.topic()).id(id).payload(huge).build());
    })).isInstanceOf(PayloadTooLargeException.class)
        .satisfies(e -> assertThat(((PayloadTooLargeException) e).messageId()).isEqualTo(id));
    assertThat(orderExists(id)).isFalse();
    assertThatThrownBy(() -> OutgoingMessage.builder("").build()).isInstanceOf(InvalidMessageException.class)
        .hasMessageContaining("message.topic");
    assertThatThrownBy(() -> OutgoingMessage.builder("no spaces").build()).isInstanceOf(InvalidMessageException.class);
    settle(u, Duration.ZERO);
    assertThat(ids(u.sink())).doesNotContain(id);
  }

  // ---- the crash harness ----

  /** What a crash test's child publishes: a new topic (recorded by {@code sink}), a new group and a new id. */
  private record CrashUnit(String topic, String group, MessageSink sink, String id) {
  }

  private CrashUnit crashUnit(String prefix) {
    String topic = topic(prefix);
    return new CrashUnit(topic, group("g"), sink(topic), MessageIds.shared().next());
  }

  private void runChildUntilCrash(ChildJvms jvms, CrashPoints.Point point, CrashUnit c) throws Exception {
    ConvergePostgres pg = ConvergePostgres.shared();
    ChildJvm.Builder launch = jvms.launch(ChildProducerMain.class)
        .database(pg.jdbcUrl(), pg.user(), pg.password(), schema)
        .property(ChildProducerMain.CRASH, point)
        .property(ChildProducerMain.FACTORY, childFactory.getName())
        .property(ChildProducerMain.GROUP, c.group())
        .property(ChildProducerMain.TOPIC, c.topic())
        .property(ChildProducerMain.ID, c.id());
    childEnv().forEach((k, v) -> launch.property(ChildProducerMain.ENV + k, v));
    ChildJvm child = launch.start();
    int exit = child.awaitExit(Duration.ofSeconds(90)); // fails with the output when the child did not exit
    String output = child.output();
    assertThat(exit).as("child halted at %s; output:%n%s", point, output).isEqualTo(ChildJvm.HALTED);
    assertThat(output).contains(ChildProducerMain.HALTING + point);
  }
}
