package io.converge.examples;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.producer.Envelope;
import io.converge.producer.MessageIds;
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
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * The smoke flow of the demo: each order is one local transaction that inserts the order row,
 * published as a RocketMQ half message committed or rolled back with it; every tenth order fails
 * its business check and rolls back. Afterwards the report compares the database with what a
 * consumer received.
 */
final class OrderFlow {

  private static final String CREATE = """
      CREATE TABLE demo_orders (
        id text PRIMARY KEY,
        customer text NOT NULL,
        amount_cents bigint NOT NULL CHECK (amount_cents > 0))
      """;
  private static final String INSERT = "INSERT INTO demo_orders (id, customer, amount_cents) VALUES (?, ?, ?)";
  private static final String EXISTS = "SELECT 1 FROM demo_orders WHERE id = ?";

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
    String topic = "demo-order-created-" + UUID.randomUUID().toString().substring(0, 8);
    mq.createTopic(topic);
    TransactionMQProducer producer = new TransactionMQProducer("demo-orders-" + UUID.randomUUID().toString().substring(0, 8));
    producer.setNamesrvAddr(mq.nameServerAddress());
    producer.setTransactionListener(new Listener());
    producer.start();
    int rolledBack = 0;
    try (RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
      for (int i = 0; i < orders; i++) {
        String id = MessageIds.shared().next();
        // every tenth order has a zero amount: the CHECK constraint fails, the transaction rolls back
        long amount = i % 10 == 9 ? 0 : 1000 + i;
        Message m = new Message(topic, ("{\"order\":\"" + id + "\",\"amount\":" + amount + "}").getBytes(UTF_8));
        m.putUserProperty(Envelope.MESSAGE_ID, id);
        m.setKeys(id);
        LocalTransactionState state = producer.sendMessageInTransaction(m, new Order(id, "customer-" + (i % 7), amount)).getLocalTransactionState();
        if (state == LocalTransactionState.ROLLBACK_MESSAGE) {
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
    } finally {
      producer.shutdown();
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

  private record Order(String id, String customer, long amountCents) {}

  /** The local transaction: insert the order; its outcome decides the half message's. */
  private final class Listener implements TransactionListener {
    @Override
    public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
      Order order = (Order) arg;
      try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(INSERT)) {
        c.setAutoCommit(false);
        ps.setString(1, order.id());
        ps.setString(2, order.customer());
        ps.setLong(3, order.amountCents());
        ps.executeUpdate();
        c.commit();
        return LocalTransactionState.COMMIT_MESSAGE;
      } catch (SQLException e) {
        return LocalTransactionState.ROLLBACK_MESSAGE;
      }
    }

    @Override
    public LocalTransactionState checkLocalTransaction(MessageExt msg) {
      try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(EXISTS)) {
        ps.setString(1, msg.getUserProperty(Envelope.MESSAGE_ID));
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? LocalTransactionState.COMMIT_MESSAGE : LocalTransactionState.UNKNOW;
        }
      } catch (SQLException e) {
        return LocalTransactionState.UNKNOW;
      }
    }
  }

  /** What happened, and whether the database and the messages agree. */
  record Report(int attempted, int committed, int rolledBack, int delivered, int duplicates,
                long deliveredWithoutOrder, long orderWithoutMessage) {

    boolean consistent() {
      return committed + rolledBack == attempted && deliveredWithoutOrder == 0 && orderWithoutMessage == 0;
    }

    void print(PrintStream out) {
      out.println();
      out.println("Reconciliation (RocketMQ half messages + PostgreSQL):");
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
