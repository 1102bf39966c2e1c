package io.converge.producer.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.producer.InvalidMessageException;
import io.converge.producer.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TransactionTimedOutException;
import io.converge.producer.TxnProducer;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** RocketMQ-specific behaviour beyond the shared contract. */
@ExtendWith(RocketMQExtension.class)
class RocketMQBackendIT {

  private static OrdersTable orders;

  @BeforeAll
  static void schema() throws Exception {
    orders = OrdersTable.create("rmqbackend");
  }

  @Test
  void aUnitOfWorkPastTheTimeoutIsRolledBack(EmbeddedRocketMQ mq) throws Exception {
    String topic = RocketMQExtension.uniqueTopic("slow");
    mq.createTopic(topic);
    try (TxnProducer p = TxnProducer.builder().group(RocketMQExtension.uniqueTopic("g")).dataSource(orders.db())
        .backend(RocketMQBackend.nameServer(mq.nameServerAddress())).topics(topic)
        .localTransactionTimeout(Duration.ofMillis(300)).build()) {
      String id = MessageIds.shared().next();
      assertThatThrownBy(() -> p.inTransaction(tx -> {
        OrdersTable.insert(tx.connection(), id);
        tx.publish(OutgoingMessage.builder(topic).id(id).payload("slow".getBytes(UTF_8)).build());
        Thread.sleep(500);
        return null;
      })).isInstanceOf(TransactionTimedOutException.class)
          .satisfies(e -> assertThat(((TransactionTimedOutException) e).messageId()).isEqualTo(id));
      assertThat(orders.count(id)).isZero();
    }
  }

  @Test
  void anUnknownDeclaredTopicFailsTheBuild(EmbeddedRocketMQ mq) {
    assertThatThrownBy(() -> TxnProducer.builder().group("g-unknown").dataSource(orders.db())
        .backend(RocketMQBackend.nameServer(mq.nameServerAddress())).topics("no-such-topic-" + System.nanoTime()).build())
        .isInstanceOf(InvalidMessageException.class).hasMessageContaining("unknown to the RocketMQ name server");
  }

  /** In a child JVM whose classpath lacks rocketmq-client: the error names the artifact to add. */
  @Test
  void withoutTheRocketMQClientTheErrorNamesTheArtifact(@TempDir Path tmp) throws Exception {
    String classpath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(entry -> !entry.contains("rocketmq-client"))
        .collect(Collectors.joining(File.pathSeparator));
    Path log = tmp.resolve("child.log");
    Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", classpath, MissingClientMain.class.getName())
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String output = Files.readString(log);
    assertThat(output).as(output).contains("MISSING: The RocketMQ backend needs org.apache.rocketmq:rocketmq-client");
  }
}
