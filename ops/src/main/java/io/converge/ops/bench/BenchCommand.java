package io.converge.ops.bench;

import io.converge.ops.bench.outbox.DrainBench;
import io.converge.ops.bench.outbox.DrainScenario;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code converge bench}: runs a scenario, or a pair, against freshly started embedded servers. */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
        "Runs a named scenario against embedded RocketMQ and PostgreSQL (fsync on) with warm-up and",
        "repeated runs; prints median and spread, and for --baseline the ratio A/B run by run.",
        "Scenarios: see --list (baselines rocketmq-send, rocketmq-txn-send, pg-insert, pulsar-send, pulsar-txn[-100];",
        "Converge's own, e.g. txn-producer-rocketmq, txn-producer-pulsar[-100]). Pulsar starts in a child JVM when needed.",
        "Drain scenarios (outbox-drain, outbox-drain-sequential, claim-mark, cdc-drain) fill --rows rows and time --threads relays draining them."})
public final class BenchCommand implements Callable<Integer> {

  @Parameters(index = "0", arity = "0..1", description = "the scenario to run")
  String scenario;

  @Option(names = "--baseline", description = "a second scenario to compare against, in the same run")
  String baseline;

  @Option(names = {"-t", "--threads"}, split = ",", defaultValue = "1", description = "worker threads; a list runs each (default ${DEFAULT-VALUE})")
  List<Integer> threads;

  @Option(names = "--warmup", defaultValue = "PT5S", description = "warm-up per scenario, ISO-8601 (default ${DEFAULT-VALUE})")
  Duration warmup;

  @Option(names = "--duration", defaultValue = "PT10S", description = "one measured run, ISO-8601 (default ${DEFAULT-VALUE})")
  Duration duration;

  @Option(names = "--runs", defaultValue = "5", description = "measured runs (default ${DEFAULT-VALUE})")
  int runs;

  @Option(names = "--list", description = "list the scenarios and exit")
  boolean list;

  @Option(names = "--rows", defaultValue = "100000", description = "drain scenarios: rows filled and drained per run (default ${DEFAULT-VALUE})")
  int rows;

  @Option(names = "--batch", defaultValue = "200", description = "drain scenarios: key heads claimed per relay cycle (default ${DEFAULT-VALUE})")
  int batch;

  @Override
  public Integer call() throws Exception {
    if (list || scenario == null) {
      Scenarios.names().forEach(System.out::println);
      return scenario == null && !list ? 2 : 0;
    }
    if (DrainScenario.isDrain(scenario)) {
      return drain();
    }
    // fail on a bad name before starting any server
    Scenarios.create(scenario).close();
    if (baseline != null) {
      Scenarios.create(baseline).close();
    }
    try (BenchEnv env = BenchEnv.start()) {
      BenchRunner runner = new BenchRunner(env, System.out);
      for (int t : threads) {
        List<Scenario> scenarios = new ArrayList<>();
        scenarios.add(Scenarios.create(scenario));
        if (baseline != null) {
          scenarios.add(Scenarios.create(baseline));
        }
        System.out.printf("%n== %s%s, %d thread(s)%n", scenario, baseline == null ? "" : " vs " + baseline, t);
        runner.run(scenarios, new BenchRunner.Plan(t, warmup, duration, runs));
      }
    }
    return 0;
  }

  /** Drain scenarios (outbox-drain, claim-mark): --threads is the number of relays. */
  private int drain() throws Exception {
    if (baseline != null && !DrainScenario.isDrain(baseline)) {
      throw new IllegalArgumentException("a drain scenario compares only with another (outbox-drain, outbox-drain-sequential, claim-mark), but was " + baseline);
    }
    if (rows < 1 || batch < 1 || batch > 10_000) {
      throw new IllegalArgumentException("bench.rows must be positive and bench.batch between 1 and 10000, but were "
          + rows + " and " + batch);
    }
    try (BenchEnv env = BenchEnv.start()) {
      DrainBench bench = new DrainBench(env, System.out);
      for (int t : threads) {
        List<String> names = baseline == null ? List.of(scenario) : List.of(scenario, baseline);
        System.out.printf("%n== %s, %d relay(s)%n", String.join(" vs ", names), t);
        bench.run(names, t, batch, rows, runs);
      }
    }
    return 0;
  }
}
