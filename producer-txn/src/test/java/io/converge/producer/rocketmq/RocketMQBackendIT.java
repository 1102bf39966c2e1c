package io.converge.producer.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.InvalidMessageException;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.core.TransactionTimedOutException;
import io.converge.producer.TxnProducer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** RocketMQ-specific behaviour beyond the shared contract. */
@ExtendWith({RocketMQExtension.class, ChildJvmExtension.class})
class RocketMQBackendIT {

  private static final OrdersTable orders = OrdersTable.create("rmqbackend");

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
        Thread.sleep(500); // the slow unit under test: past its 300 ms timeout
        return null;
      })).isInstanceOf(TransactionTimedOutException.class)
          .satisfies(e -> assertThat(((TransactionTimedOutException) e).messageId()).isEqualTo(id));
      assertThat(orders.count(id)).isZero();
    }
  }

  @Test
  void anUnknownDeclaredTopicFailsTheBuild(EmbeddedRocketMQ mq) {
    // brokers are registered (the rule's premise): a topic of this broker is routable; the broker's first
    // registration may still be under way when this class runs first in its JVM (as in RocketMQNoRouteIT)
    mq.createTopic(RocketMQExtension.uniqueTopic("registered"));
    assertThatThrownBy(() -> TxnProducer.builder().group("g-unknown").dataSource(orders.db())
        .backend(RocketMQBackend.nameServer(mq.nameServerAddress())).topics("no-such-topic-" + System.nanoTime())
        .build())
        .isInstanceOf(InvalidMessageException.class).hasMessageContaining("unknown to the RocketMQ name server");
  }

  /** In a child JVM whose classpath lacks rocketmq-client: the error names the artifact to add. */
  @Test
  void withoutTheRocketMQClientTheErrorNamesTheArtifact(ChildJvms jvms) throws Exception {
    ChildJvm child = jvms.launch(MissingClientMain.class).classpath(entry -> !entry.contains("rocketmq-client"))
        .start();
    child.awaitExit(Duration.ofSeconds(60)); // fails with the output when the child did not exit
    String output = child.output();
    assertThat(output).as(output).contains("MISSING: The RocketMQ backend needs org.apache.rocketmq:rocketmq-client");
  }
}
