package io.converge.broker.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;

/**
 * Run in a child JVM by {@link EmbeddedRocketMQLifecycleIT}: sends a message, restarts the broker on
 * the same store, consumes the message, stops everything and returns from main. The JVM must then
 * exit by itself: a non-daemon thread left by the broker would keep it alive.
 */
public final class RestartAndExitMain {

  private RestartAndExitMain() {
  }

  public static void main(String[] args) throws Exception {
    try {
      run();
    } catch (Throwable t) {
      t.printStackTrace();
      System.exit(2); // a failure must not look like a hang: the broker's threads would keep the JVM alive
    }
  }

  private static void run() throws Exception {
    EmbeddedRocketMQ mq = EmbeddedRocketMQ.builder().build().start();
    String topic = RocketMQExtension.uniqueTopic("restart");
    mq.createTopic(topic);
    DefaultMQProducer producer = new DefaultMQProducer(RocketMQExtension.uniqueTopic("pg"));
    producer.setNamesrvAddr(mq.nameServerAddress());
    producer.start();
    try {
      producer.send(new Message(topic, "kept".getBytes(UTF_8)));
    } finally {
      producer.shutdown();
    }
    mq.restartBroker();
    awaitTransactionMetricsIdle();
    try (RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
      String body = new String(consumer.awaitCount(1, Duration.ofSeconds(30)).get(0).getBody(), UTF_8);
      System.out.println("RECEIVED " + body);
    }
    mq.stop();
    System.out.println("STOPPED");
  }

  /**
   * RocketMQ's transaction-metrics service spins on the clock until its first flush: the broker shortens the
   * flush interval (RocketMQ's is 10 s) so that its thread soon waits instead of keeping a core busy.
   */
  private static void awaitTransactionMetricsIdle() {
    await("TransactionFlushService waiting between flushes, not spinning").atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().contains("TransactionFlushService"))
            .anyMatch(t -> t.getState() == Thread.State.TIMED_WAITING));
    System.out.println("METRICS-FLUSH WAITING");
  }
}
