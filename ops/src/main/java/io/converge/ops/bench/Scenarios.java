package io.converge.ops.bench;

import io.converge.ops.bench.baseline.PostgresInsert;
import io.converge.ops.bench.baseline.PulsarSend;
import io.converge.ops.bench.baseline.RocketMQSend;
import io.converge.ops.bench.baseline.RocketMQTxnSend;
import io.converge.ops.bench.converge.ConsumerScenario;
import io.converge.ops.bench.converge.RocketMQConsumerScenario;
import io.converge.ops.bench.converge.TxnProducerScenario;
import io.converge.ops.bench.outbox.DrainScenario;
import io.converge.ops.bench.peer.ModulithOutboxWrite;
import io.converge.ops.bench.peer.RocketMQNativeTxn;
import io.converge.ops.bench.peer.SpringIdempotentReceiver;
import io.converge.ops.bench.saga.OrchestratedSagaScenario;
import io.converge.ops.bench.saga.SagaScenario;
import io.converge.ops.bench.tcc.TccBarrierScenario;
import io.converge.ops.bench.tcc.TccGlobalScenario;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** The scenarios {@code converge bench} knows, by name. */
public final class Scenarios {

  private static final Map<String, Supplier<Scenario>> ALL = new LinkedHashMap<>();

  static {
    register("rocketmq-send", RocketMQSend::new);
    register("rocketmq-txn-send", RocketMQTxnSend::new);
    register("pg-insert", PostgresInsert::new);
    register("txn-producer-rocketmq", TxnProducerScenario::rocketmq);
    register("pulsar-send", PulsarSend::plain);
    register("pulsar-txn", () -> PulsarSend.transactional(1));
    register("pulsar-txn-100", () -> PulsarSend.transactional(100));
    register("txn-producer-pulsar", () -> TxnProducerScenario.pulsar(1));
    register("txn-producer-pulsar-100", () -> TxnProducerScenario.pulsar(100));
    register("consumer-plain", () -> new ConsumerScenario(ConsumerScenario.Mode.PLAIN));
    register("consumer-idem", () -> new ConsumerScenario(ConsumerScenario.Mode.IDEMPOTENT));
    register("consumer-idem-keyed", () -> new ConsumerScenario(ConsumerScenario.Mode.KEYED));
    register("consumer-idem-pipelined", () -> new ConsumerScenario(ConsumerScenario.Mode.PIPELINED));
    register("consumer-idem-duplicates", () -> new ConsumerScenario(ConsumerScenario.Mode.DUPLICATES));
    register("consumer-idem-prefilled", () -> new ConsumerScenario(ConsumerScenario.Mode.PREFILLED));
    register("outbox-write", TxnProducerScenario::outbox);
    // peers: what a user would pick instead of Converge, doing the same work (docs/benchmarks.md)
    register("rocketmq-native-txn", RocketMQNativeTxn::new);
    register("si-idempotent-receiver", SpringIdempotentReceiver::new);
    register("modulith-outbox-write", ModulithOutboxWrite::new);
    RocketMQConsumerScenario.NAMES.forEach(n -> register(n, () -> RocketMQConsumerScenario.named(n)));
    SagaScenario.NAMES.forEach(n -> register(n, () -> SagaScenario.named(n)));
    OrchestratedSagaScenario.NAMES.forEach(n -> register(n, () -> OrchestratedSagaScenario.named(n)));
    // tcc-barrier and tcc-barrier-commit against their baseline tcc-handler-plain (run as pairs, e.g.
    // tcc-barrier-commit:tcc-handler-plain)
    TccBarrierScenario.NAMES.forEach(n -> register(n, () -> TccBarrierScenario.named(n)));
    TccGlobalScenario.NAMES.forEach(n -> register(n, () -> TccGlobalScenario.named(n)));
  }

  private Scenarios() {
  }

  private static void register(String name, Supplier<Scenario> factory) {
    ALL.put(name, factory);
  }

  /** The names, in registration order, then the drain scenarios ({@code outbox-drain}, {@code claim-mark}). */
  public static Iterable<String> names() {
    List<String> names = new ArrayList<>(ALL.keySet());
    for (DrainScenario.Mode m : DrainScenario.Mode.values()) {
      names.add(new DrainScenario(m, 1).name());
    }
    return names;
  }

  /**
   * A new instance of the scenario {@code name}.
   *
   * @throws IllegalArgumentException naming the known scenarios when {@code name} is unknown
   */
  public static Scenario create(String name) {
    Supplier<Scenario> factory = ALL.get(name);
    if (factory == null) {
      throw new IllegalArgumentException("unknown scenario '" + name + "'; known: " + String.join(", ", names()));
    }
    return factory.get();
  }
}
