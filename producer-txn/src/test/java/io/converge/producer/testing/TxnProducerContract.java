package io.converge.producer.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.Ports;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.DatabaseUnavailableException;
import io.converge.producer.Envelope;
import io.converge.producer.InvalidMessageException;
import io.converge.producer.LateCommitFencedException;
import io.converge.producer.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.PayloadTooLargeException;
import io.converge.producer.TxnProducer;
import io.converge.producer.UnitOfWorkException;
import io.converge.producer.schema.Migrations;
import io.converge.producer.spi.CrashPoints;
import io.converge.producer.spring.TransactionalPublisher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
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
 */
public abstract class TxnProducerContract {

  static final String INSERT_ORDER = "INSERT INTO contract_orders (id, note) VALUES (?, ?)";

  /** The database of this test class: a fresh schema with the producer migrations and a business table. */
  protected DataSource db;
  private String schema;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  // ---- what a backend provides ----

  /** A new producer instance of {@code group}, declaring {@code topic}, on {@code db}. */
  protected abstract TxnProducer newProducer(String group, String topic, DataSource db);

  /** Creates {@code topic} on the broker (idempotent). */
  protected abstract void createTopic(String topic);

  /** Starts recording deliveries on {@code topic}. */
  protected abstract MessageSink consume(String topic);

  /** Stops the broker (keeping its data). */
  protected abstract void stopBroker();

  /** Starts the broker again after {@link #stopBroker()}. */
  protected abstract void startBroker();

  /** Whether the backend reaches the broker inside the unit of work (RocketMQ, Pulsar: yes; outbox: no). */
  protected abstract boolean reachesBrokerInUnitOfWork();

  /** The factory the crash tests' child JVM uses to build the same producer. */
  protected abstract Class<? extends ChildProducerFactory> childFactory();

  /** What the child's factory needs (broker addresses). */
  protected abstract Map<String, String> childEnv();

  /** How long recovery (check-back, relay, recovery scan) may take to resolve an open message. */
  protected abstract Duration recoveryWindow();

  // ---- fixtures ----

  @BeforeEach
  void schema() throws Exception {
    if (db == null) {
      db = ConvergePostgres.shared().newSchema("contract");
      try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT current_schema()")) {
        rs.next();
        schema = rs.getString(1);
        s.execute("CREATE TABLE contract_orders (id text PRIMARY KEY, note text NOT NULL)");
      }
      Migrations.apply(db, "producer");
    }
  }

  @AfterEach
  void closeAll() throws Exception {
    CrashPoints.install(null);
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    closeables.clear();
  }

  private String topic(String prefix) {
    String topic = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    createTopic(topic);
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
    try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT 1 FROM contract_orders WHERE id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Waits until every id in {@code ids} was delivered at least once. */
  protected static List<Delivered> awaitDelivered(MessageSink sink, Set<String> ids, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      List<Delivered> matching = sink.received().stream().filter(d -> ids.contains(d.id())).toList();
      Set<String> seen = matching.stream().map(Delivered::id).collect(Collectors.toSet());
      if (seen.containsAll(ids)) {
        return matching;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not delivered within " + timeout + ": " + ids.stream().filter(i -> !seen.contains(i)).toList());
      }
      Thread.sleep(20);
    }
  }

  /**
   * Publishes a committed marker and waits for it; then waits {@code extra} more. Afterwards nothing
   * published before the marker can still be on its way, except through recovery, covered by extra.
   */
  private void settle(TxnProducer p, MessageSink sink, String topic, Duration extra) throws Exception {
    String marker = order(p, topic, "marker");
    awaitDelivered(sink, Set.of(marker), Duration.ofSeconds(60));
    Thread.sleep(extra.toMillis());
  }

  private static Set<String> ids(MessageSink sink) {
    return sink.received().stream().map(Delivered::id).collect(Collectors.toSet());
  }

  // ---- 1. commit ----

  @Test
  void commitDeliversTheMessageAndKeepsTheBusinessRow() throws Exception {
    String topic = topic("commit");
    TxnProducer p = producer(group("g"), topic);
    MessageSink sink = sink(topic);
    String id = order(p, topic, "committed");
    assertThat(orderExists(id)).isTrue();
    Delivered d = awaitDelivered(sink, Set.of(id), Duration.ofSeconds(60)).get(0);
    assertThat(new String(d.payload(), UTF_8)).isEqualTo("committed");
  }

  // ---- 2. rollback ----

  @Test
  void exceptionInTheUnitOfWorkRollsBackRowAndMessage() throws Exception {
    String topic = topic("rollback");
    TxnProducer p = producer(group("g"), topic);
    MessageSink sink = sink(topic);
    String id = MessageIds.shared().next();
    assertThatThrownBy(() -> p.inTransaction(tx -> {
      insertOrder(tx.connection(), id, "doomed");
      tx.publish(message(topic, id, "doomed"));
      throw new IllegalStateException("business rule violated");
    })).isInstanceOf(IllegalStateException.class).hasMessage("business rule violated");
    assertThat(orderExists(id)).isFalse();

    // a business write that fails (a checked SQLException: duplicate key) rolls back the same way
    String existing = order(p, topic, "first");
    String duplicateMessage = MessageIds.shared().next();
    assertThatThrownBy(() -> p.inTransaction(tx -> {
      tx.publish(message(topic, duplicateMessage, "duplicate"));
      insertOrder(tx.connection(), existing, "duplicate key");
      return null;
    })).isInstanceOf(UnitOfWorkException.class)
        .hasCauseInstanceOf(java.sql.SQLException.class)
        .satisfies(e -> assertThat(((UnitOfWorkException) e).messageId()).isEqualTo(duplicateMessage));

    settle(p, sink, topic, recoveryWindow());
    assertThat(ids(sink)).doesNotContain(id, duplicateMessage);
  }

  // ---- 3. kill -9 after the DB commit, before the broker commit ----

  @Test
  void killAfterDbCommitBeforeBrokerCommitIsDeliveredByRecovery(@TempDir Path tmp) throws Exception {
    String topic = topic("crash-after");
    String group = group("g");
    MessageSink sink = sink(topic);
    String id = MessageIds.shared().next();
    runChildUntilCrash(CrashPoints.Point.AFTER_DB_COMMIT, group, topic, id, tmp);
    assertThat(orderExists(id)).as("the DB committed before the crash").isTrue();
    producer(group, topic); // a new instance of the same group answers for the dead one
    awaitDelivered(sink, Set.of(id), recoveryWindow().plusSeconds(30));
  }

  // ---- 4. kill -9 before the DB commit ----

  @Test
  void killBeforeDbCommitIsNeverDelivered(@TempDir Path tmp) throws Exception {
    String topic = topic("crash-before");
    String group = group("g");
    MessageSink sink = sink(topic);
    String id = MessageIds.shared().next();
    runChildUntilCrash(CrashPoints.Point.BEFORE_DB_COMMIT, group, topic, id, tmp);
    TxnProducer heir = producer(group, topic);
    settle(heir, sink, topic, recoveryWindow());
    assertThat(orderExists(id)).isFalse();
    assertThat(ids(sink)).doesNotContain(id);
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
  @Test
  void aRetryWithTheSameIdAfterACrashedAttemptDeliversOnlyTheRetry(@TempDir Path tmp) throws Exception {
    String topic = topic("retry");
    String group = group("g");
    MessageSink sink = sink(topic);
    String id = MessageIds.shared().next();
    TxnProducer heir = producer(group, topic); // started first: the retry follows the crash at once
    runChildUntilCrash(CrashPoints.Point.BEFORE_DB_COMMIT, group, topic, id, tmp);
    heir.inTransaction(tx -> {
      insertOrder(tx.connection(), id, "retry");
      return tx.publish(message(topic, id, "retry"));
    });
    awaitDelivered(sink, Set.of(id), Duration.ofSeconds(60));
    settle(heir, sink, topic, recoveryWindow().plusSeconds(2));
    List<String> payloads = sink.received().stream().filter(d -> d.id().equals(id))
        .map(d -> new String(d.payload(), UTF_8)).distinct().toList();
    assertThat(payloads).as("payloads delivered for message %s", id).containsExactly("retry");
  }

  /**
   * As above, but the retry comes after recovery already discarded the dead attempt: on RocketMQ the
   * check-back fenced its id (ROLLED_BACK row of that attempt), on Pulsar the broker aborted its
   * transaction at the timeout; the outbox has nothing on the broker to discard (the dead attempt's row
   * died with its transaction). The retry with the same id must commit (not be refused as a late
   * commit of the fenced attempt for the whole log retention) and only its payload may be delivered.
   */
  @Test
  void aRetryWithTheSameIdAfterRecoveryDiscardedTheCrashedAttemptCommits(@TempDir Path tmp) throws Exception {
    String topic = topic("refenced");
    String group = group("g");
    MessageSink sink = sink(topic);
    String id = MessageIds.shared().next();
    TxnProducer heir = producer(group, topic);
    runChildUntilCrash(CrashPoints.Point.BEFORE_DB_COMMIT, group, topic, id, tmp);
    if (reachesBrokerInUnitOfWork()) {
      awaitDiscarded(id);
    }
    heir.inTransaction(tx -> {
      insertOrder(tx.connection(), id, "retry");
      return tx.publish(message(topic, id, "retry"));
    });
    assertThat(orderExists(id)).as("the retry committed").isTrue();
    awaitDelivered(sink, Set.of(id), Duration.ofSeconds(60));
    settle(heir, sink, topic, recoveryWindow().plusSeconds(2));
    List<String> payloads = sink.received().stream().filter(d -> d.id().equals(id))
        .map(d -> new String(d.payload(), UTF_8)).distinct().toList();
    assertThat(payloads).as("payloads delivered for message %s", id).containsExactly("retry");
  }

  // ---- 5. a local commit after recovery discarded the message ----

  @Test
  protected void localCommitAfterRecoveryDiscardedTheMessageFails() throws Exception {
    String topic = topic("late");
    TxnProducer p = producer(group("g"), topic);
    MessageSink sink = sink(topic);
    String id = MessageIds.shared().next();
    CrashPoints.install(point -> {
      if (point == CrashPoints.Point.AFTER_BROKER_PREPARE) {
        awaitDiscarded(id); // the application stalls past the local-transaction timeout
      }
    });
    assertThatThrownBy(() -> p.inTransaction(tx -> {
      insertOrder(tx.connection(), id, "late");
      return tx.publish(message(topic, id, "late"));
    })).isInstanceOf(LateCommitFencedException.class)
        .satisfies(e -> assertThat(((LateCommitFencedException) e).messageId()).isEqualTo(id));
    CrashPoints.install(null);
    assertThat(orderExists(id)).isFalse();
    settle(p, sink, topic, recoveryWindow());
    assertThat(ids(sink)).doesNotContain(id);
  }

  /** Blocks until recovery has decided that message {@code id} is rolled back. */
  protected abstract void awaitDiscarded(String id);

  // ---- 6. several messages: all or none; envelope preserved ----

  @Test
  void severalMessagesAreAllOrNoneWithIdKeyAndHeadersPreserved() throws Exception {
    String topic = topic("many");
    TxnProducer p = producer(group("g"), topic);
    MessageSink sink = sink(topic);
    List<String> committed = List.of(MessageIds.shared().next(), MessageIds.shared().next(), MessageIds.shared().next());
    p.inTransaction(tx -> {
      for (String id : committed) {
        insertOrder(tx.connection(), id, "many");
        tx.publish(OutgoingMessage.builder(topic).id(id).key("customer-7").tenant("acme")
            .header("trace-note", "n-" + id).payload(id.getBytes(UTF_8)).build());
      }
      return null;
    });
    List<String> rolledBack = List.of(MessageIds.shared().next(), MessageIds.shared().next(), MessageIds.shared().next());
    assertThatThrownBy(() -> p.inTransaction(tx -> {
      for (String id : rolledBack) {
        insertOrder(tx.connection(), id, "none");
        tx.publish(message(topic, id, "none"));
      }
      throw new IllegalStateException("third message's business check failed");
    })).isInstanceOf(IllegalStateException.class);

    List<Delivered> delivered = awaitDelivered(sink, Set.copyOf(committed), Duration.ofSeconds(60));
    for (Delivered d : delivered) {
      assertThat(d.key()).isEqualTo("customer-7");
      assertThat(d.headers()).containsEntry(Envelope.MESSAGE_ID, d.id())
          .containsEntry(Envelope.KEY, "customer-7")
          .containsEntry(Envelope.TENANT, "acme")
          .containsEntry("trace-note", "n-" + d.id())
          .containsKey(Envelope.SOURCE)
          .containsKey(Envelope.CREATED_AT);
      assertThat(new String(d.payload(), UTF_8)).isEqualTo(d.id());
    }
    settle(p, sink, topic, recoveryWindow());
    assertThat(ids(sink)).doesNotContainAnyElementsOf(rolledBack);
    for (String id : rolledBack) {
      assertThat(orderExists(id)).isFalse();
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
  @Test
  void aRolledBackSavepointDiscardsTheMessagesPublishedAfterIt() throws Exception {
    String topic = topic("savepoint");
    TxnProducer p = producer(group("g"), topic);
    MessageSink sink = sink(topic);
    String a = MessageIds.shared().next();
    String b = MessageIds.shared().next();
    String c = MessageIds.shared().next();
    p.inTransaction(tx -> {
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
    p.inTransaction(tx -> {
      java.sql.Savepoint sp = tx.connection().setSavepoint(); // before the first publish
      insertOrder(tx.connection(), d, "d");
      tx.publish(message(topic, d, "d"));
      tx.connection().rollback(sp);
      insertOrder(tx.connection(), e, "e");
      return tx.publish(message(topic, e, "e"));
    });
    awaitDelivered(sink, Set.of(a, c, e), Duration.ofSeconds(60));
    settle(p, sink, topic, recoveryWindow());
    assertThat(ids(sink)).as("published after a rolled-back savepoint").doesNotContain(b, d);
    assertThat(orderExists(b)).isFalse();
    assertThat(orderExists(d)).isFalse();
  }

  /**
   * The same through Spring: {@link TransactionalPublisher} inside a {@code DataSourceTransactionManager}
   * transaction with a {@code PROPAGATION_NESTED} inner transaction (a savepoint) that fails. The
   * first outer transaction publishes before the savepoint, the second only inside it.
   */
  @Test
  void aRolledBackSpringNestedTransactionDiscardsItsMessages() throws Exception {
    String topic = topic("nested");
    TxnProducer p = producer(group("g"), topic);
    MessageSink sink = sink(topic);
    TransactionalPublisher publisher = new TransactionalPublisher(p, db);
    DataSourceTransactionManager tm = new DataSourceTransactionManager(db);
    TransactionTemplate outer = new TransactionTemplate(tm);
    TransactionTemplate nested = new TransactionTemplate(tm);
    nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
    JdbcTemplate jdbc = new JdbcTemplate(db);
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ids.add(MessageIds.shared().next());
    }
    String a = ids.get(0), b = ids.get(1), c = ids.get(2), d = ids.get(3), e = ids.get(4);
    outer.executeWithoutResult(s -> {
      jdbc.update(INSERT_ORDER, a, "a");
      publisher.publish(message(topic, a, "a"));
      assertThatThrownBy(() -> nested.executeWithoutResult(n -> {
        jdbc.update(INSERT_ORDER, b, "b");
        publisher.publish(message(topic, b, "b"));
        throw new IllegalStateException("inner business rule violated");
      })).hasMessage("inner business rule violated");
      nested.executeWithoutResult(n -> {
        jdbc.update(INSERT_ORDER, c, "c");
        publisher.publish(message(topic, c, "c"));
      });
    });
    outer.executeWithoutResult(s -> {
      assertThatThrownBy(() -> nested.executeWithoutResult(n -> {
        jdbc.update(INSERT_ORDER, d, "d");
        publisher.publish(message(topic, d, "d")); // the first publish of the outer transaction
        throw new IllegalStateException("inner business rule violated");
      })).hasMessage("inner business rule violated");
      jdbc.update(INSERT_ORDER, e, "e");
      publisher.publish(message(topic, e, "e"));
    });
    awaitDelivered(sink, Set.of(a, c, e), Duration.ofSeconds(60));
    settle(p, sink, topic, recoveryWindow());
    assertThat(ids(sink)).as("published in a rolled-back nested transaction").doesNotContain(b, d);
    assertThat(orderExists(b)).isFalse();
    assertThat(orderExists(d)).isFalse();
    assertThat(orderExists(c)).isTrue();
  }

  /**
   * A {@code PROPAGATION_REQUIRES_NEW} transaction inside another is a unit of its own: its message is
   * delivered when it commits although the outer transaction then rolls back, and the outer one's
   * message is not.
   */
  @Test
  void aSpringRequiresNewTransactionIsItsOwnUnitOfWork() throws Exception {
    String topic = topic("requiresnew");
    TxnProducer p = producer(group("g"), topic);
    MessageSink sink = sink(topic);
    TransactionalPublisher publisher = new TransactionalPublisher(p, db);
    DataSourceTransactionManager tm = new DataSourceTransactionManager(db);
    TransactionTemplate outer = new TransactionTemplate(tm);
    TransactionTemplate inner = new TransactionTemplate(tm);
    inner.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
    JdbcTemplate jdbc = new JdbcTemplate(db);
    String before = MessageIds.shared().next();
    String own = MessageIds.shared().next();
    // two orders, two keys (message() keys by the id's time prefix: these two would share one)
    assertThatThrownBy(() -> outer.executeWithoutResult(s -> {
      jdbc.update(INSERT_ORDER, before, "outer");
      publisher.publish(message(topic, before, "outer", "outer-" + before));
      inner.executeWithoutResult(n -> {
        jdbc.update(INSERT_ORDER, own, "inner");
        publisher.publish(message(topic, own, "inner", "inner-" + own));
      });
      throw new IllegalStateException("outer business rule violated");
    })).hasMessage("outer business rule violated");
    assertThat(orderExists(own)).isTrue();
    assertThat(orderExists(before)).isFalse();
    awaitDelivered(sink, Set.of(own), Duration.ofSeconds(60));
    settle(p, sink, topic, recoveryWindow());
    assertThat(ids(sink)).doesNotContain(before);
  }

  // ---- 7. broker down, DB down ----

  @Test
  void brokerDown() throws Exception {
    String topic = topic("down");
    TxnProducer p = producer(group("g"), topic);
    MessageSink sink = sink(topic);
    order(p, topic, "warm-up"); // routes known
    String id = MessageIds.shared().next();
    stopBroker();
    try {
      if (reachesBrokerInUnitOfWork()) {
        assertThatThrownBy(() -> p.inTransaction(tx -> {
          insertOrder(tx.connection(), id, "broker-down");
          return tx.publish(message(topic, id, "broker-down"));
        })).isInstanceOf(BrokerUnavailableException.class)
            .satisfies(e -> assertThat(((BrokerUnavailableException) e).messageId()).isEqualTo(id));
        assertThat(orderExists(id)).isFalse();
      } else {
        p.inTransaction(tx -> {
          insertOrder(tx.connection(), id, "broker-down");
          return tx.publish(message(topic, id, "broker-down"));
        });
        assertThat(orderExists(id)).isTrue();
      }
    } finally {
      startBroker();
    }
    if (!reachesBrokerInUnitOfWork()) {
      awaitDelivered(sink, Set.of(id), recoveryWindow().plusSeconds(60));
    } else {
      settle(p, sink, topic, recoveryWindow());
      assertThat(ids(sink)).doesNotContain(id);
    }
  }

  @Test
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
    settle(healthy, sink, topic, Duration.ZERO);
    assertThat(ids(sink)).doesNotContain(id);
  }

  // ---- 8. bad input before anything is sent ----

  @Test
  void oversizePayloadAndBadTopicAreTypedErrorsBeforeAnythingIsSent() throws Exception {
    String topic = topic("bad");
    TxnProducer p = producer(group("g"), topic);
    MessageSink sink = sink(topic);
    String id = MessageIds.shared().next();
    byte[] huge = new byte[5 * 1024 * 1024];
    assertThatThrownBy(() -> p.inTransaction(tx -> {
      insertOrder(tx.connection(), id, "huge");
      return tx.publish(OutgoingMessage.builder(topic).id(id).payload(huge).build());
    })).isInstanceOf(PayloadTooLargeException.class)
        .satisfies(e -> assertThat(((PayloadTooLargeException) e).messageId()).isEqualTo(id));
    assertThat(orderExists(id)).isFalse();
    assertThatThrownBy(() -> OutgoingMessage.builder("").build()).isInstanceOf(InvalidMessageException.class)
        .hasMessageContaining("message.topic");
    assertThatThrownBy(() -> OutgoingMessage.builder("no spaces").build()).isInstanceOf(InvalidMessageException.class);
    settle(p, sink, topic, Duration.ZERO);
    assertThat(ids(sink)).doesNotContain(id);
  }

  // ---- the crash harness ----

  private void runChildUntilCrash(CrashPoints.Point point, String group, String topic, String id, Path tmp) throws Exception {
    ConvergePostgres pg = ConvergePostgres.shared();
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"),
        "-Dconverge.child.crash=" + point,
        "-Dconverge.child.factory=" + childFactory().getName(),
        "-Dconverge.child.jdbc.url=" + pg.jdbcUrl(),
        "-Dconverge.child.jdbc.user=" + pg.user(),
        "-Dconverge.child.jdbc.password=" + pg.password(),
        "-Dconverge.child.schema=" + schema,
        "-Dconverge.child.group=" + group,
        "-Dconverge.child.topic=" + topic,
        "-Dconverge.child.id=" + id));
    childEnv().forEach((k, v) -> cmd.add("-Dconverge.child.env." + k + "=" + v));
    cmd.add(ChildProducerMain.class.getName());
    Path log = tmp.resolve("child.log");
    Process child = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    boolean exited = child.waitFor(90, TimeUnit.SECONDS);
    if (!exited) {
      child.destroyForcibly();
    }
    String output = Files.readString(log);
    assertThat(exited).as("child exited; output:%n%s", output).isTrue();
    assertThat(child.exitValue()).as("child halted at %s; output:%n%s", point, output).isEqualTo(137);
    assertThat(output).contains(ChildProducerMain.HALTING + point);
  }
}
