package io.converge.ops.bench.saga;

import io.converge.examples.demo.Backend;
import io.converge.examples.demo.SagaLoad;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.Latencies;
import io.converge.ops.bench.NamedScenario;
import java.time.Duration;
import java.util.List;

/**
 * {@code saga-e2e-<backend>}: the examples' five services on one backend ({@link SagaLoad}); one
 * operation places an order ({@code POST /orders}, as the demo's clients do) and waits until it is PAID
 * or CANCELED, its latency taken from the POST to the settled state. Each worker thread is one client
 * with one order in flight. On close, every order placed is reconciled with the demo's invariants; a
 * violated one fails the scenario, since the throughput of a broken saga means nothing.
 */
public final class SagaScenario extends NamedScenario {

  /** The names of the scenarios, one per backend. */
  public static final List<String> NAMES = List.of("saga-e2e-rocketmq", "saga-e2e-outbox", "saga-e2e-pulsar");

  /** How long one order may take to settle before the scenario fails. */
  static final Duration SETTLE = Duration.ofMinutes(1);

  private static final String DTM = "DTM publishes 575 two-phase global transactions per second, two SQL statements"
      + " per branch, on 4 cores; the target here is at least that on this machine's cores.";

  private final Backend backend;
  private final Latencies latencies = new Latencies();
  private SagaLoad load;

  private SagaScenario(Backend backend) {
    super("saga-e2e-" + backend.mode(), "order");
    this.backend = backend;
  }

  /** The scenario called {@code name}, one of {@link #NAMES}. */
  public static SagaScenario named(String name) {
    if (!NAMES.contains(name)) {
      throw new IllegalArgumentException("saga scenario must be one of " + NAMES + ", but was " + name);
    }
    return new SagaScenario(Backend.parse(name.substring("saga-e2e-".length())));
  }

  @Override
  public Latencies latencies() {
    return latencies;
  }

  @Override
  public String reference() {
    return DTM;
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    load = SagaLoad.start(env.platform(), backend, Duration.ofMinutes(2));
  }

  @Override
  public int runOnce(int worker) throws Exception {
    long start = System.nanoTime();
    load.placeAndSettle(SETTLE);
    latencies.record(System.nanoTime() - start);
    return 1;
  }

  /** How many orders were placed so far (0 before {@link #setUp}). */
  public int placed() {
    return load == null ? 0 : load.placed();
  }

  /**
   * Reconciles every order placed, then stops the services.
   *
   * @throws IllegalStateException listing the violated invariants when the orders do not reconcile
   */
  @Override
  public void close() throws Exception {
    if (load == null) {
      return;
    }
    List<String> violations;
    try {
      violations = load.reconcile();
      if (!violations.isEmpty()) {
        load.describe(System.out);
      }
    } finally {
      load.close();
      load = null;
    }
    if (!violations.isEmpty()) {
      throw new IllegalStateException(name() + ": the settled orders do not reconcile, so its throughput is void: "
          + violations);
    }
  }
}
