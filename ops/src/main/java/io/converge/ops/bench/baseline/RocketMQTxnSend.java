package io.converge.ops.bench.baseline;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.Scenario;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/** Baseline: a raw RocketMQ transactional send (half message + immediate COMMIT), 1 KiB, no DB. */
public final class RocketMQTxnSend implements Scenario {

  private static final byte[] PAYLOAD = new byte[1024];
  private TransactionMQProducer producer;
  private ExecutorService checkExecutor;
  private String topic;

  @Override
  public String name() {
    return "rocketmq-txn-send";
  }

  @Override
  public String unit() {
    return "msg";
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    topic = env.newTopic("bench-txn");
    producer = new TransactionMQProducer("bench-txn-" + System.nanoTime());
    producer.setNamesrvAddr(env.rocketmq().nameServerAddress());
    checkExecutor = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "bench-txn-check");
      t.setDaemon(true);
      return t;
    });
    producer.setExecutorService(checkExecutor);
    producer.setTransactionListener(new TransactionListener() {
      @Override
      public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
        return LocalTransactionState.COMMIT_MESSAGE;
      }

      @Override
      public LocalTransactionState checkLocalTransaction(MessageExt msg) {
        return LocalTransactionState.COMMIT_MESSAGE;
      }
    });
    producer.start();
  }

  @Override
  public int runOnce(int worker) throws Exception {
    SendStatus status = producer.sendMessageInTransaction(new Message(topic, PAYLOAD), null).getSendStatus();
    if (status != SendStatus.SEND_OK) {
      throw new IllegalStateException("send status " + status);
    }
    return 1;
  }

  @Override
  public void close() {
    if (producer != null) {
      producer.shutdown();
    }
    if (checkExecutor != null) {
      checkExecutor.shutdownNow();
    }
  }
}
