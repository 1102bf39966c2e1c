package io.converge.ops.bench.baseline;

import io.converge.ops.bench.Teardown;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.NamedScenario;
import io.converge.core.rocketmq.RocketMQClients;
import io.converge.core.rocketmq.RocketMQSettings;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Baseline: a raw RocketMQ synchronous send of a 1 KiB message, set up by Converge's client factory
 * like Converge's own producers. {@link RocketMQTxnSend} is its transactional variant.
 */
public class RocketMQSend extends NamedScenario {

  private static final byte[] PAYLOAD = new byte[1024];
  /** Commits every half message at once and on check-back: no DB in the baseline. */
  private static final TransactionListener COMMIT = new TransactionListener() {

    @Override
    public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
      return LocalTransactionState.COMMIT_MESSAGE;
    }

    @Override
    public LocalTransactionState checkLocalTransaction(MessageExt msg) {
      return LocalTransactionState.COMMIT_MESSAGE;
    }
  };

  private final boolean transactional;
  private final Teardown teardown = new Teardown();
  private DefaultMQProducer producer;
  private String topic;

  /** The plain synchronous send. */
  public RocketMQSend() {
    this(false);
  }

  RocketMQSend(boolean transactional) {
    super(transactional ? "rocketmq-txn-send" : "rocketmq-send", "msg");
    this.transactional = transactional;
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    String prefix = transactional ? "bench-txn" : "bench-send";
    topic = env.platform().newTopic(prefix);
    String nameServer = env.platform().rocketmq().nameServerAddress();
    String group = prefix + "-" + System.nanoTime();
    if (transactional) {
      ExecutorService checkExecutor = teardown.add(Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "bench-txn-check");
        t.setDaemon(true);
        return t;
      }), ExecutorService::shutdownNow);
      producer = RocketMQClients.startTransactional(nameServer, group, RocketMQSettings.DEFAULT_SEND_TIMEOUT,
          RocketMQSettings.DEFAULT_RETRIES, COMMIT, checkExecutor);
    } else {
      producer = RocketMQClients.startProducer(nameServer, group);
    }
    teardown.add(producer, DefaultMQProducer::shutdown);
  }

  @Override
  public int runOnce(int worker) throws Exception {
    Message msg = new Message(topic, PAYLOAD);
    SendResult result = transactional ? ((TransactionMQProducer) producer).sendMessageInTransaction(msg, null)
        : producer.send(msg);
    if (result.getSendStatus() != SendStatus.SEND_OK) {
      throw new IllegalStateException("send status " + result.getSendStatus());
    }
    return 1;
  }

  @Override
  public void close() throws Exception {
    teardown.close();
  }
}
