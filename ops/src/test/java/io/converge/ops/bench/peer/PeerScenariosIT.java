package io.converge.ops.bench.peer;

import io.converge.ops.bench.tcc.TccBarrierScenario;
import io.converge.ops.bench.tcc.TccGlobalScenario;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
 * So do the TCC scenarios and their baseline: {@code tcc-barrier} goes through the barrier's rows, its baseline
 * {@code tcc-handler-plain} does the same updates without them, and {@code tcc-global-rocketmq} completes its global
 * transactions through the participants (a smoke of a few units, not a measurement).
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

  @Test
  void theTccBarrierScenarioWritesTheBarrierRowsItsBaselineDoesNot() throws Exception {
    for (String name : List.of("tcc-barrier", "tcc-barrier-commit", "tcc-handler-plain")) {
      try (TccBarrierScenario s = TccBarrierScenario.named(name)) {
        s.setUp(env, 2);
        int units = 0;
        for (int i = 0; i < 6; i++) {
          units += s.runOnce(i % 2);
        }
        assertThat(units).isEqualTo(6);
        long[] rowsAndDebited = s.barrierRowsAndDebited();
        assertThat(rowsAndDebited[0]).as(name + ": barrier rows").isEqualTo(name.equals("tcc-handler-plain") ? 0 : 12);
        assertThat(rowsAndDebited[1]).as(name + ": units debited, none left frozen").isEqualTo(6);
      }
    }
  }

  @Test
  void theTccGlobalScenarioCompletesItsGlobalTransactionsThroughTheParticipants() throws Exception {
    try (TccGlobalScenario s = TccGlobalScenario.named("tcc-global-rocketmq")) {
      s.setUp(env, 2);
      ExecutorService workers = Executors.newFixedThreadPool(2);
      try {
        List<Future<Integer>> done = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
          int worker = w;
          done.add(workers.submit(() -> s.runOnce(worker) + s.runOnce(worker)));
        }
        int units = 0;
        for (Future<Integer> f : done) {
          units += f.get();
        }
        assertThat(units).isEqualTo(4);
      } finally {
        workers.shutdownNow();
      }
      assertThat(s.counts()).containsEntry("COMPLETED", 4L).containsEntry("out try", 4L)
          .containsEntry("out confirm", 4L).containsEntry("in try", 4L).containsEntry("in confirm", 4L)
          .doesNotContainKey("out cancel").doesNotContainKey("in cancel");
      assertThat(s.latencies().percentiles().count()).isEqualTo(4);
    }
  }
}
