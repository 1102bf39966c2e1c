package io.converge.ops.bench.baseline;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.Scenario;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

/** Baseline: a raw RocketMQ synchronous send of a 1 KiB message. */
public final class RocketMQSend implements Scenario {

  private static final byte[] PAYLOAD = new byte[1024];
  private DefaultMQProducer producer;
  private String topic;

  @Override
  public String name() {
    return "rocketmq-send";
  }

  @Override
  public String unit() {
    return "msg";
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    topic = env.newTopic("bench-send");
    producer = new DefaultMQProducer("bench-send-" + System.nanoTime());
    producer.setNamesrvAddr(env.rocketmq().nameServerAddress());
    producer.start();
  }

  @Override
  public int runOnce(int worker) throws Exception {
    SendStatus status = producer.send(new Message(topic, PAYLOAD)).getSendStatus();
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
  }
}
