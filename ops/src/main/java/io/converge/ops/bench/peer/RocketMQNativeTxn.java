package io.converge.ops.bench.peer;

import io.converge.core.rocketmq.RocketMQClients;
import io.converge.core.rocketmq.RocketMQSettings;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.BenchOrders;
import io.converge.ops.bench.NamedScenario;
import io.converge.ops.bench.Teardown;
import java.sql.Connection;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Peer {@code rocketmq-native-txn}: what a service writes with RocketMQ's own transaction API instead of
 * {@code TxnProducer} (compare {@code txn-producer-rocketmq} with it). One operation: a 1 KiB half message keyed by
 * the worker's customer, {@code executeLocalTransaction} inserting the one business row and committing on a pooled
 * connection, COMMIT returned; the check-back looks the business row up (committed: COMMIT; absent: UNKNOW while the
 * message is younger than a minute, then ROLLBACK). It has none of Converge's transaction log, fencing of late commits
 * or per-key queue selection: that is what the ratio prices. Thread-safe.
 */
public final class RocketMQNativeTxn extends NamedScenario {

  /** The user property carrying the business row's id, read by the check-back. */
  static final String ORDER_ID = "bench-order-id";

  private static final byte[] PAYLOAD = new byte[1024];
  private static final long CHECK_ROLLBACK_AFTER_MILLIS = 60_000;

  private final AtomicLong ids = new AtomicLong();
  private final Teardown teardown = new Teardown();
  private DataSource pool;
  private TransactionMQProducer producer;
  private String topic;

  /** The {@code rocketmq-native-txn} scenario. */
  public RocketMQNativeTxn() {
    super("rocketmq-native-txn", "unit");
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    pool = env.newPool("bench_native", threads + 2);
    BenchOrders.create(pool);
    topic = env.platform().newTopic("bench-native");
    ExecutorService checks = teardown.add(Executors.newFixedThreadPool(4, r -> {
      Thread t = new Thread(r, "bench-native-check");
      t.setDaemon(true);
      return t;
    }), ExecutorService::shutdownNow);
    producer = teardown.add(RocketMQClients.startTransactional(env.platform().rocketmq().nameServerAddress(),
        "bench-native-" + System.nanoTime(), RocketMQSettings.DEFAULT_SEND_TIMEOUT, RocketMQSettings.DEFAULT_RETRIES,
        new Listener(), checks), TransactionMQProducer::shutdown);
  }

  /** The application's listener: the local transaction is the business insert, the check-back a lookup. */
  private final class Listener implements TransactionListener {

    @Override
    public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
      try (Connection c = pool.getConnection()) {
        c.setAutoCommit(false);
        BenchOrders.insert(c, (Long) arg, msg.getKeys());
        c.commit();
        return LocalTransactionState.COMMIT_MESSAGE;
      } catch (Exception e) {
        return LocalTransactionState.UNKNOW; // the commit's outcome may be unknown: the check-back decides
      }
    }

    @Override
    public LocalTransactionState checkLocalTransaction(MessageExt msg) {
      try {
        if (BenchOrders.exists(pool, Long.parseLong(msg.getUserProperty(ORDER_ID)))) {
          return LocalTransactionState.COMMIT_MESSAGE;
        }
        return System.currentTimeMillis() - msg.getBornTimestamp() < CHECK_ROLLBACK_AFTER_MILLIS
            ? LocalTransactionState.UNKNOW
            : LocalTransactionState.ROLLBACK_MESSAGE;
      } catch (Exception e) {
        return LocalTransactionState.UNKNOW;
      }
    }
  }

  @Override
  public int runOnce(int worker) throws Exception {
    long id = ids.incrementAndGet();
    Message msg = new Message(topic, PAYLOAD);
    msg.setKeys("customer-" + worker);
    msg.putUserProperty(ORDER_ID, Long.toString(id));
    TransactionSendResult result = producer.sendMessageInTransaction(msg, id);
    if (result.getSendStatus() != SendStatus.SEND_OK
        || result.getLocalTransactionState() != LocalTransactionState.COMMIT_MESSAGE) {
      throw new IllegalStateException("unit " + id + ": send " + result.getSendStatus() + ", local transaction "
          + result.getLocalTransactionState());
    }
    return 1;
  }

  /** The topic of this run (set up). */
  String topic() {
    return topic;
  }

  /** The business rows committed so far. */
  long orders() throws java.sql.SQLException {
    return BenchOrders.count(pool);
  }

  @Override
  public void close() throws Exception {
    teardown.close();
  }
}
