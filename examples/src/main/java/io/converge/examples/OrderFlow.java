package io.converge.examples;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.producer.Envelope;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.UnitOfWorkException;
import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.producer.schema.Migrations;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * The demo's flow: each order is one unit of work of a {@link TxnProducer} (RocketMQ half-message
 * backend) that inserts the order row and publishes {@code OrderCreated}; every tenth order fails its
 * business check (a CHECK constraint) and rolls back. Afterwards the report compares the database
 * with what a consumer received.
 */
final class OrderFlow {

  private static final String CREATE = """
      CREATE TABLE demo_orders (
        id text PRIMARY KEY,
        customer text NOT NULL,
        amount_cents bigint NOT NULL CHECK (amount_cents > 0))
      """;
  private static final String INSERT = "INSERT INTO demo_orders (id, customer, amount_cents) VALUES (?, ?, ?)";

  private final EmbeddedRocketMQ mq;
  private final DataSource db;

  OrderFlow(EmbeddedRocketMQ mq, DataSource db) {
    this.mq = mq;
    this.db = db;
  }

  Report run(int orders) throws Exception {
    try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
      s.execute(CREATE);
    }
    Migrations.apply(db, "producer");
    String topic = "demo-order-created-" + UUID.randomUUID().toString().substring(0, 8);
    mq.createTopic(topic);
    int rolledBack = 0;
    try (TxnProducer producer = TxnProducer.builder()
            .group("demo-orders-" + UUID.randomUUID().toString().substring(0, 8))
            .dataSource(db)
            .backend(RocketMQBackend.nameServer(mq.nameServerAddress()))
            .topics(topic)
            .build();
         RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
      for (int i = 0; i < orders; i++) {
        String customer = "customer-" + (i % 7);
        // every tenth order has a zero amount: the CHECK constraint fails, the unit of work rolls back
        long amount = i % 10 == 9 ? 0 : 1000 + i;
        try {
          producer.inTransaction(tx -> {
            OutgoingMessage m = OutgoingMessage.builder(topic).key(customer)
                .payload(("{\"customer\":\"" + customer + "\",\"amount\":" + amount + "}").getBytes(UTF_8)).build();
            try (PreparedStatement ps = tx.connection().prepareStatement(INSERT)) {
              ps.setString(1, m.id());
              ps.setString(2, customer);
              ps.setLong(3, amount);
              ps.executeUpdate();
            }
            return tx.publish(m);
          });
        } catch (UnitOfWorkException e) {
          // the business check failed: order and message are both rolled back
          rolledBack++;
        }
      }
      Set<String> committed = committedIds();
      consumer.await(m -> committed.contains(m.getUserProperty(Envelope.MESSAGE_ID)), committed.size(), Duration.ofSeconds(60));
      Thread.sleep(mq.settings().transactionTimeout().plus(mq.settings().transactionCheckInterval()).toMillis());
      List<MessageExt> received = consumer.received();
      Set<String> unique = received.stream().map(m -> m.getUserProperty(Envelope.MESSAGE_ID)).collect(Collectors.toSet());
      return new Report(orders, committed.size(), rolledBack, unique.size(), received.size() - unique.size(),
          unique.stream().filter(id -> !committed.contains(id)).count(),
          committed.stream().filter(id -> !unique.contains(id)).count());
    }
  }

  private Set<String> committedIds() throws SQLException {
    Set<String> ids = new HashSet<>();
    try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT id FROM demo_orders")) {
      while (rs.next()) {
        ids.add(rs.getString(1));
      }
    }
    return ids;
  }

  /** What happened, and whether the database and the messages agree. */
  record Report(int attempted, int committed, int rolledBack, int delivered, int duplicates,
                long deliveredWithoutOrder, long orderWithoutMessage) {

    boolean consistent() {
      return committed + rolledBack == attempted && deliveredWithoutOrder == 0 && orderWithoutMessage == 0;
    }

    void print(PrintStream out) {
      out.println();
      out.println("Reconciliation (TxnProducer, RocketMQ backend, PostgreSQL):");
      out.printf("  orders attempted                  %6d%n", attempted);
      out.printf("  orders committed                  %6d%n", committed);
      out.printf("  orders rolled back (bad amount)   %6d%n", rolledBack);
      out.printf("  distinct messages delivered       %6d%n", delivered);
      out.printf("  duplicate deliveries seen         %6d%n", duplicates);
      out.printf("  messages without an order         %6d   (must be 0: charged-but-no-order)%n", deliveredWithoutOrder);
      out.printf("  orders without a message          %6d   (must be 0: lost message)%n", orderWithoutMessage);
    }
  }
}
