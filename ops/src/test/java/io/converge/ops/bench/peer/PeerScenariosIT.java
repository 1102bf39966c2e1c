package io.converge.ops.bench.peer;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.core.MessageIds;
import io.converge.ops.bench.BenchEnv;
import java.time.Duration;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The peers of {@code converge bench} do the work they are compared on, against the embedded servers: a peer that
 * skipped its database write, its message or its deduplication would make Converge's ratio against it meaningless.
 */
class PeerScenariosIT {

  @AutoClose
  private static BenchEnv env;

  @BeforeAll
  static void servers() {
    env = BenchEnv.start();
  }

  @Test
  void theNativeRocketMQTransactionCommitsTheBusinessRowAndDeliversTheMessageOfEveryUnit() throws Exception {
    try (RocketMQNativeTxn s = new RocketMQNativeTxn()) {
      s.setUp(env, 2);
      try (RecordingConsumer delivered = RecordingConsumer.start(env.platform().rocketmq(), s.topic())) {
        int units = 0;
        for (int i = 0; i < 10; i++) {
          units += s.runOnce(i % 2);
        }
        assertThat(units).isEqualTo(10);
        assertThat(s.orders()).isEqualTo(10);
        assertThat(delivered.awaitCount(10, Duration.ofSeconds(30))).hasSize(10);
      }
    }
  }

  @Test
  void theSpringIdempotentReceiverRunsTheHandlerOncePerMessageIdInItsTransaction() throws Exception {
    try (SpringIdempotentReceiver s = new SpringIdempotentReceiver()) {
      s.setUp(env, 1);
      for (int i = 0; i < 5; i++) {
        assertThat(s.runOnce(0)).isEqualTo(1);
      }
      String id = MessageIds.shared().next();
      assertThat(s.deliver(id)).isTrue();
      assertThat(s.deliver(id)).as("a redelivery is discarded").isFalse();
      assertThat(s.orders()).isEqualTo(6);
    }
  }

  @Test
  void theModulithRegistryStoresOnePublicationWithEveryCommittedOrder() throws Exception {
    try (ModulithOutboxWrite s = new ModulithOutboxWrite()) {
      s.setUp(env, 2);
      for (int i = 0; i < 10; i++) {
        assertThat(s.runOnce(i % 2)).isEqualTo(1);
      }
      assertThat(s.orders()).isEqualTo(10);
      assertThat(s.publications()).isEqualTo(10);
    }
  }
}
