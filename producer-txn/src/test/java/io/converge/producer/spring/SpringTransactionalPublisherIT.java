package io.converge.producer.spring;

import static io.converge.producer.testing.SpringPublishing.message;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.ConvergeException;
import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.core.TransactionTimedOutException;
import io.converge.producer.TxnProducer;
import io.converge.producer.testing.SpringPublishing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Inside a Spring transaction the publisher joins it: commit delivers, rollback never does. */
@ExtendWith(RocketMQExtension.class)
class SpringTransactionalPublisherIT {

  private static ApplicationContextRunner runner(EmbeddedRocketMQ mq, DataSource db, String group, String topic,
      String timeout) {
    return SpringPublishing.runner(db, ConvergeProducerAutoConfiguration.class)
        .withPropertyValues("converge.producer.mode=rocketmq", "converge.producer.group=" + group,
            "converge.producer.name-server=" + mq.nameServerAddress(), "converge.producer.topics=" + topic,
            "converge.producer.local-transaction-timeout=" + timeout);
  }

  @Test
  void publishJoinsTheSpringTransaction(EmbeddedRocketMQ mq) throws Exception {
    String topic = RocketMQExtension.uniqueTopic("spring");
    mq.createTopic(topic);
    DataSource db = SpringPublishing.withOrders(ConvergePostgres.shared().newSchema("spring"));
    runner(mq, db, "spring-orders", topic, "5s")
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(context -> {
          assertThat(context).hasSingleBean(TxnProducer.class).hasSingleBean(TransactionalPublisher.class);
          SpringPublishing publishing = SpringPublishing.of(context, db);
          JdbcTemplate jdbc = new JdbcTemplate(db);
          try (RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
            String committed = publishing.committedWithOrder(message(topic, null, "yes"));
            String rolledBack = publishing.rolledBack(message(topic, null, "no"), true);
            assertThatThrownBy(
                () -> publishing.publisher().publish(OutgoingMessage.builder(topic).payload(new byte[1]).build()))
                .isInstanceOf(ConvergeException.class).hasMessageContaining("needs an active Spring transaction");

            consumer.await(m -> committed.equals(m.getUserProperty(Envelope.MESSAGE_ID)), 1, Duration.ofSeconds(60));
            String marker = publishing.committed(message(topic, null, "marker"));
            consumer.await(m -> marker.equals(m.getUserProperty(Envelope.MESSAGE_ID)), 1, Duration.ofSeconds(60));
            // past a check-back of the rolled-back half message, it still never arrived
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10))
                .until(
                    () -> consumer.received(m -> rolledBack.equals(m.getUserProperty(Envelope.MESSAGE_ID))).isEmpty());
            assertThat(consumer.received(m -> rolledBack.equals(m.getUserProperty(Envelope.MESSAGE_ID)))).isEmpty();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM orders", Integer.class)).isEqualTo(1);
            assertThat(context.getBean(MeterRegistry.class).get("txn.send.latency").timer().count())
                .isGreaterThanOrEqualTo(3);
          }
        });
  }

  /**
   * Issue 13.15: a transaction manager on another DataSource than the publisher's gives the publisher
   * an auto-commit connection, whose log rows would commit whatever the transaction does: the first
   * publish fails naming the fix, and nothing is logged.
   */
  @Test
  void aTransactionOnAnotherDataSourceIsRefusedAtTheFirstPublish(EmbeddedRocketMQ mq) throws Exception {
    String topic = RocketMQExtension.uniqueTopic("springother");
    mq.createTopic(topic);
    DataSource db = ConvergePostgres.shared().newSchema("springother");
    io.converge.core.Migrations.apply(db, "producer");
    DataSource other = ConvergePostgres.shared().newSchema("springother2");
    try (TxnProducer producer = rocketMQProducer(mq, "spring-other", topic, db)) {
      TransactionalPublisher publisher = new TransactionalPublisher(producer, db);
      TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(other));
      String id = MessageIds.shared().next();
      assertThatThrownBy(() -> tx.executeWithoutResult(
          s -> publisher.publish(OutgoingMessage.builder(topic).id(id).payload("x".getBytes(UTF_8)).build())))
          .isInstanceOf(ConvergeException.class)
          .hasMessageContaining(id).hasMessageContaining("auto-commit").hasMessageContaining("DataSource");
      assertThat(new JdbcTemplate(db).queryForObject("SELECT count(*) FROM converge_txn_log WHERE message_id = ?",
          Integer.class, id))
          .as("log rows outside the transaction").isZero();
    }
  }

  @Test
  void aSpringTransactionPastTheTimeoutRollsBack(EmbeddedRocketMQ mq) {
    String topic = RocketMQExtension.uniqueTopic("springslow");
    mq.createTopic(topic);
    DataSource db = SpringPublishing.withOrders(ConvergePostgres.shared().newSchema("springslow"));
    runner(mq, db, "spring-slow", topic, "200ms")
        .run(context -> {
          TransactionalPublisher publisher = context.getBean(TransactionalPublisher.class);
          TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(db));
          JdbcTemplate jdbc = new JdbcTemplate(db);
          String id = MessageIds.shared().next();
          assertThatThrownBy(() -> tx.executeWithoutResult(s -> {
            jdbc.update("INSERT INTO orders VALUES (?)", id);
            publisher.publish(OutgoingMessage.builder(topic).id(id).payload("slow".getBytes(UTF_8)).build());
            try {
              Thread.sleep(400);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          })).isInstanceOf(TransactionTimedOutException.class);
          assertThat(jdbc.queryForObject("SELECT count(*) FROM orders", Integer.class)).isZero();
        });
  }

  /**
   * A COMMIT that reached the database but whose answer was lost (the connection broke while the driver read
   * it): Spring's {@code JdbcTransactionManager} (and JPA's) translate the failure into a
   * {@code DataAccessException}, roll back on the dead connection and report the transaction ROLLED_BACK. The
   * work and its log row committed: the message must be left to the check-back, which answers COMMIT from the
   * log, and be delivered. Found by {@code converge chaos}: an order stuck because its StockReserved was ended
   * with ROLLBACK after a PostgreSQL crash restart.
   */
  @Test
  void aCommitWhoseAnswerIsLostIsResolvedByTheCheckBackNotRolledBack(EmbeddedRocketMQ mq) throws Exception {
    String topic = RocketMQExtension.uniqueTopic("springlost");
    mq.createTopic(topic);
    DataSource db = SpringPublishing.withOrders(ConvergePostgres.shared().newSchema("springlost"));
    io.converge.core.Migrations.apply(db, "producer");
    AtomicBoolean breakCommit = new AtomicBoolean();
    DataSource breaking = commitAnswerLost(db, breakCommit);
    try (TxnProducer producer = rocketMQProducer(mq, "spring-lost", topic, db);
        RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
      TransactionalPublisher publisher = new TransactionalPublisher(producer, breaking);
      TransactionTemplate tx = new TransactionTemplate(new JdbcTransactionManager(breaking));
      JdbcTemplate jdbc = new JdbcTemplate(breaking);
      String id = MessageIds.shared().next();
      breakCommit.set(true);
      assertThatThrownBy(() -> tx.executeWithoutResult(s -> {
        jdbc.update("INSERT INTO orders VALUES (?)", id);
        publisher.publish(OutgoingMessage.builder(topic).id(id).payload("lost".getBytes(UTF_8)).build());
      })).isInstanceOf(DataAccessException.class);
      assertThat(new JdbcTemplate(db).queryForObject("SELECT count(*) FROM orders WHERE id = ?", Integer.class, id))
          .as("the work committed").isEqualTo(1);
      consumer.await(m -> id.equals(m.getUserProperty(Envelope.MESSAGE_ID)), 1, Duration.ofSeconds(60));
    }
  }

  /** {@code db} whose connections' next commit, while {@code breakCommit} is set, commits and then fails. */
  private static DataSource commitAnswerLost(DataSource db, AtomicBoolean breakCommit) {
    return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
        (proxy, method, args) -> {
          Object result = invoke(method, db, args);
          if (!(result instanceof Connection c)) {
            return result;
          }
          return Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[]{Connection.class},
              (cp, m, a) -> {
                Object r = invoke(m, c, a);
                if (m.getName().equals("commit") && breakCommit.getAndSet(false)) {
                  throw new SQLException("I/O error: the connection broke while reading the COMMIT's answer", "08006");
                }
                return r;
              });
        });
  }

  private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /** The RocketMQ half-message producer of {@code group} on {@code db}, with a short local-transaction timeout. */
  private static TxnProducer rocketMQProducer(EmbeddedRocketMQ mq, String group, String topic, DataSource db) {
    return TxnProducer.builder()
        .group(group)
        .dataSource(db)
        .backend(io.converge.producer.rocketmq.RocketMQBackend.nameServer(mq.nameServerAddress()))
        .topics(topic)
        .localTransactionTimeout(Duration.ofSeconds(2))
        .build();
  }
}
