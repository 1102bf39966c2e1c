package io.converge.broker.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.EmbeddedServerException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Its own broker (not the shared one): restart on the same store, clean stop, clear errors. */
class EmbeddedRocketMQLifecycleIT {

  @Test
  void brokerRestartKeepsCommittedMessagesAndStopLeavesNoThreadBehind() throws Exception {
    Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
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

    try (RecordingConsumer consumer = RecordingConsumer.start(mq, topic)) {
      assertThat(new String(consumer.awaitCount(1, Duration.ofSeconds(30)).get(0).getBody(), UTF_8)).isEqualTo("kept");
    }
    mq.stop();

    // some pools end asynchronously (netty's graceful shutdown takes about 2 s)
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    Set<Thread> leftovers = leftovers(before);
    while (!leftovers.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(100);
      leftovers = leftovers(before);
    }
    assertThat(leftovers.stream().map(t -> t.getName() + " at " + java.util.Arrays.toString(t.getStackTrace()))
        .collect(Collectors.toList())).as("non-daemon threads left by the broker").isEmpty();
  }

  @Test
  void portInUseIsNamed() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      EmbeddedRocketMQ mq = EmbeddedRocketMQ.builder().nameServerPort(taken.getLocalPort()).build();
      assertThatThrownBy(mq::start)
          .isInstanceOf(EmbeddedServerException.class)
          .hasMessageContaining("port " + taken.getLocalPort())
          .hasMessageContaining("name server");
    }
  }

  @Test
  void unwritableStoreDirIsNamed(@TempDir Path tmp) throws Exception {
    // below a regular file: not writable whoever runs the test (root ignores permission bits)
    Path store = Files.createFile(tmp.resolve("a-file")).resolve("store");
    EmbeddedRocketMQ mq = EmbeddedRocketMQ.builder().storeDir(store).build();
    assertThatThrownBy(mq::start)
        .isInstanceOf(EmbeddedServerException.class)
        .hasMessageContaining(store.toString())
        .hasMessageContaining("not writable");
  }

  private static Set<Thread> leftovers(Set<Thread> before) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> !before.contains(t) && t.isAlive() && !t.isDaemon())
        .collect(Collectors.toSet());
  }
}
