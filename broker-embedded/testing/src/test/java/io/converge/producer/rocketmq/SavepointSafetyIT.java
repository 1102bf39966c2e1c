package io.converge.producer.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.producer.ConnectionCallRefusedException;
import io.converge.core.ConvergeException;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import io.converge.producer.testing.Rows;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendFactory;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.TxnBackend;
import io.converge.producer.internal.TxnLog;
import io.converge.producer.spring.TransactionalPublisher;
import io.converge.testing.Delivered;
import io.converge.testing.RocketMQTopicSink;
import java.sql.Connection;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * What the unit of work guarantees when a savepoint rollback fails, or when the business code tries
 * to end the unit's transaction itself (review of issue 13.1), on the embedded RocketMQ and
 * PostgreSQL. The real RocketMQ backend sends and ends the half messages; only its savepoint rollback
 * is made to fail (a backend that cannot discard, e.g. Pulsar without its coordinator).
 */
@ExtendWith(RocketMQExtension.class)
class SavepointSafetyIT {

  private static final String INSERT = "INSERT INTO sp_orders (id) VALUES (?)";
  private static EmbeddedRocketMQ mq;
  private static DataSource db;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  @BeforeAll
  static void servers(EmbeddedRocketMQ server) throws Exception {
    mq = server;
    db = ConvergePostgres.shared().newSchema("savepoint");
    try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE sp_orders (id text PRIMARY KEY)");
    }
    Migrations.apply(db, "producer");
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    closeables.clear();
  }

  /**
   * TxnContext: publish A, savepoint, publish B, the rollback to the savepoint fails, the unit catches
   * that and returns. The unit must roll back as a whole: no row, no message, no committed log row.
   */
  @Test
  void aFailedSavepointRollbackCaughtByTheUnitRollsItBackAsAWhole() throws Exception {
    String topic = topic();
    TxnProducer p = producer(topic, failingSavepoints());
    RocketMQTopicSink sink = sink(topic);
    String a = MessageIds.shared().next();
    String b = MessageIds.shared().next();
    String c = MessageIds.shared().next();
    assertThatThrownBy(() -> p.inTransaction(tx -> {
      insert(tx.connection(), a);
      tx.publish(message(topic, a));
      Savepoint sp = tx.connection().setSavepoint();
      insert(tx.connection(), b);
      tx.publish(message(topic, b));
      try {
        tx.connection().rollback(sp);
      } catch (Exception e) {
        // the usual "best effort" code: carry on
      }
      insert(tx.connection(), c);
      return tx.publish(message(topic, c));
    })).isInstanceOf(ConvergeException.class).hasMessageContaining("cannot commit");
    assertNothingCommitted(p, sink, topic, a, b, c);
  }

  /**
   * Spring: a NESTED transaction publishes B and fails; its savepoint rollback fails; the outer code
   * catches the nested exception and carries on (the usual NESTED pattern). The outer transaction
   * must roll back as a whole, with A published before the savepoint.
   */
  @Test
  void aFailedNestedRollbackCaughtByTheOuterTransactionRollsItBackAsAWhole() throws Exception {
    String topic = topic();
    TxnProducer p = producer(topic, failingSavepoints());
    RocketMQTopicSink sink = sink(topic);
    TransactionalPublisher publisher = new TransactionalPublisher(p, db);
    DataSourceTransactionManager tm = new DataSourceTransactionManager(db);
    TransactionTemplate outer = new TransactionTemplate(tm);
    TransactionTemplate nested = new TransactionTemplate(tm);
    nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
    JdbcTemplate jdbc = new JdbcTemplate(db);
    String a = MessageIds.shared().next();
    String b = MessageIds.shared().next();
    String c = MessageIds.shared().next();
    assertThatThrownBy(() -> outer.executeWithoutResult(s -> {
      jdbc.update(INSERT, a);
      publisher.publish(message(topic, a));
      try {
        nested.executeWithoutResult(n -> {
          jdbc.update(INSERT, b);
          publisher.publish(message(topic, b));
          throw new IllegalStateException("inner business rule violated");
        });
      } catch (RuntimeException e) {
        // the outer method goes on without the nested part
      }
      jdbc.update(INSERT, c);
      publisher.publish(message(topic, c));
    })).isInstanceOf(ConvergeException.class).hasMessageContaining("cannot commit");
    assertNothingCommitted(p, sink, topic, a, b, c);
  }

  /**
   * commit(), rollback() and setAutoCommit(true) on TxnContext.connection() would split the unit from
   * its messages: each is refused, and the unit then still rolls back cleanly (nothing delivered, no
   * row); close() does not close the unit's connection, so the next unit commits normally.
   */
  @Test
  void callsThatEndTheUnitsTransactionAreRefused() throws Exception {
    String topic = topic();
    TxnProducer p = producer(topic, RocketMQBackend.nameServer(mq.nameServerAddress()));
    RocketMQTopicSink sink = sink(topic);
    String a = MessageIds.shared().next();
    String b = MessageIds.shared().next();
    List<String> refused = new ArrayList<>();
    assertThatThrownBy(() -> p.inTransaction(tx -> {
      insert(tx.connection(), a);
      tx.publish(message(topic, a));
      Connection c = tx.connection();
      for (ThrowingCall call : List.<ThrowingCall>of(c::commit, c::rollback, () -> c.setAutoCommit(true))) {
        try {
          call.run();
        } catch (ConnectionCallRefusedException e) {
          refused.add(e.getMessage());
        }
      }
      assertThat(c.getAutoCommit()).isFalse();
      insert(tx.connection(), b);
      tx.publish(message(topic, b));
      throw new IllegalStateException("business failure after the refused calls");
    })).hasMessage("business failure after the refused calls");
    assertThat(refused).hasSize(3).allSatisfy(m -> assertThat(m).contains("throw from the unit of work to roll back"));
    String d = MessageIds.shared().next();
    p.inTransaction(tx -> {
      try (Connection c = tx.connection()) {
        insert(c, d);
      }
      insert(tx.connection(), d + "-after-close");
      return tx.publish(message(topic, d));
    });
    assertThat(exists(d)).isTrue();
    assertThat(exists(d + "-after-close")).isTrue();
    assertNothingCommitted(p, sink, topic, a, b);
  }

  private interface ThrowingCall {

    void run() throws Exception;
  }

  /** The RocketMQ backend, whose savepoint rollback fails as a backend's without its broker would. */
  private static BackendFactory failingSavepoints() {
    BackendFactory real = RocketMQBackend.nameServer(mq.nameServerAddress());
    return new BackendFactory() {

      @Override
      public String name() {
        return real.name();
      }

      @Override
      public TxnBackend create(BackendContext context) {
        TxnBackend backend = real.create(context);
        return new TxnBackend() {

          @Override
          public BackendTransaction begin() {
            BackendTransaction t = backend.begin();
            return new BackendTransaction() {

              @Override
              public void publish(OutgoingMessage message, Connection connection) throws Exception {
                t.publish(message, connection);
              }

              @Override
              public void beforeCommit(Connection connection) throws Exception {
                t.beforeCommit(connection);
              }

              @Override
              public void rollbackToSavepoint(int kept) {
                throw new ConvergeException("test: the broker cannot discard the messages after the savepoint");
              }

              @Override
              public void afterCommit() {
                t.afterCommit();
              }

              @Override
              public void afterRollback() {
                t.afterRollback();
              }
            };
          }

          @Override
          public void close() {
            backend.close();
          }
        };
      }
    };
  }

  /** None of {@code ids} has a row or a committed log row, and none is delivered, recovery included. */
  private void assertNothingCommitted(TxnProducer p, RocketMQTopicSink sink, String topic, String... ids)
      throws Exception {
    for (String id : ids) {
      assertThat(exists(id)).as("row of %s", id).isFalse();
      assertThat(new TxnLog(db).outcome(id)).as("log of %s", id).isNotEqualTo(TxnLog.Outcome.COMMITTED);
    }
    // a committed marker through the same producer, then the recovery window (check-backs)
    String marker = MessageIds.shared().next();
    TxnProducer plain = producer(topic, RocketMQBackend.nameServer(mq.nameServerAddress()));
    plain.inTransaction(tx -> tx.publish(message(topic, marker)));
    await("marker delivered within 60 s").atMost(Duration.ofSeconds(60)).until(() -> delivered(sink).contains(marker));
    // check-backs of open halves: nothing of ids is delivered during the whole recovery window
    await().during(RocketMQChildFactory.LOCAL_TX_TIMEOUT.plusSeconds(4))
        .atMost(RocketMQChildFactory.LOCAL_TX_TIMEOUT.plusSeconds(10))
        .untilAsserted(() -> assertThat(delivered(sink)).as("delivered").doesNotContain(ids));
  }

  private static Set<String> delivered(RocketMQTopicSink sink) {
    return sink.received().stream().map(Delivered::id).collect(Collectors.toSet());
  }

  private TxnProducer producer(String topic, BackendFactory backend) {
    TxnProducer p = TxnProducer.builder()
        .group("sp-" + UUID.randomUUID().toString().substring(0, 8))
        .dataSource(db)
        .backend(backend)
        .topics(topic)
        .localTransactionTimeout(RocketMQChildFactory.LOCAL_TX_TIMEOUT)
        .build();
    closeables.add(p);
    return p;
  }

  private RocketMQTopicSink sink(String topic) {
    RocketMQTopicSink s = new RocketMQTopicSink(mq, topic);
    closeables.add(s);
    return s;
  }

  private static String topic() {
    String topic = "sp-" + UUID.randomUUID().toString().substring(0, 8);
    mq.createTopic(topic);
    return topic;
  }

  private static OutgoingMessage message(String topic, String id) {
    return OutgoingMessage.builder(topic).id(id).payload(id.getBytes(UTF_8)).build();
  }

  private static void insert(Connection c, String id) throws Exception {
    Rows.insert(c, "sp_orders", id);
  }

  private static boolean exists(String id) throws Exception {
    return Rows.exists(db, "sp_orders", id);
  }
}
