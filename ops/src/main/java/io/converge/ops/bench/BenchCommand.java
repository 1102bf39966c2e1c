package io.converge.ops.bench;

import io.converge.ops.bench.converge.DedupPurgeBench;
import io.converge.ops.bench.outbox.DrainBench;
import io.converge.ops.bench.outbox.DrainScenario;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code converge bench}: runs scenarios, alone or in pairs, against freshly started embedded servers;
 * with {@code --markdown FILE}, also writes their tables as Markdown ({@code docs/benchmarks.md} is made so).
 */
@Command(name = "bench", mixinStandardHelpOptions = true, description = {
    "Runs a named scenario against embedded RocketMQ and PostgreSQL (fsync on) with warm-up and",
    "repeated runs; prints median and spread, and for --baseline the ratio A/B run by run.",
    "Scenarios: see --list (baselines rocketmq-send, rocketmq-txn-send, pg-insert, pulsar-send, pulsar-txn[-100];",
    "Converge's own, e.g. txn-producer-rocketmq, txn-producer-pulsar[-100]). Pulsar starts in a child JVM when needed.",
    "TCC: tcc-barrier:tcc-handler-plain, tcc-barrier-commit:tcc-handler-plain (the barrier's overhead per branch, its run and runAndCommit), tcc-global-rocketmq|outbox|pulsar.",
    "Drain scenarios (outbox-drain, outbox-drain-sequential, claim-mark, cdc-drain) fill --rows rows and time --threads relays draining them.",
    "Several scenarios run one after the other, e.g. txn-producer-rocketmq:pg-insert outbox-write:pg-insert --markdown docs/benchmarks.md."})
public final class BenchCommand implements Callable<Integer> {

  @Parameters(arity = "0..*", paramLabel = "SCENARIO[:BASELINE]", description = "the scenarios to run, one after the other; a:b compares a with b in the same runs")
  List<String> scenarios = new ArrayList<>();

  @Option(names = "--baseline", description = "a scenario to compare against, in the same runs, for each scenario given without one")
  String baseline;

  @Option(names = "--markdown", paramLabel = "FILE", description = "also write the result tables as Markdown to FILE, with the command, machine, JVM and date (not for drain scenarios)")
  Path markdown;

  @Spec
  CommandSpec spec;

  @Option(names = {"-t",
      "--threads"}, split = ",", defaultValue = "1", description = "worker threads; a list runs each (default ${DEFAULT-VALUE})")
  List<Integer> threads;

  @Option(names = "--warmup", defaultValue = "PT5S", description = "warm-up per scenario, ISO-8601 (default ${DEFAULT-VALUE})")
  Duration warmup;

  @Option(names = "--duration", defaultValue = "PT10S", description = "one measured run, ISO-8601 (default ${DEFAULT-VALUE})")
  Duration duration;

  @Option(names = "--runs", defaultValue = "5", description = "measured runs (default ${DEFAULT-VALUE})")
  int runs;

  @Option(names = "--memory-run", defaultValue = "PT60S", description = "after its measured runs each scenario runs this long more and the JVM's RSS and heap after GC are reported; PT0S: none (default ${DEFAULT-VALUE})")
  Duration memoryRun;

  @Option(names = "--list", description = "list the scenarios and exit")
  boolean list;

  @Option(names = "--rows", defaultValue = "100000", description = "drain scenarios: rows filled and drained per run (default ${DEFAULT-VALUE})")
  int rows;

  @Option(names = "--prefill", defaultValue = "0", description = "consumer-idem-prefilled: dedup claims inserted before the runs; dedup-purge: the rows of the day purged (default ${DEFAULT-VALUE})")
  long prefill;

  @Option(names = "--batch", defaultValue = "200", description = "drain scenarios: key heads claimed per relay cycle (default ${DEFAULT-VALUE})")
  int batch;

  /** A scenario to run and the one it is compared with (null for none). */
  private record Pair(String scenario, String baseline) {
  }

  @Override
  public Integer call() throws Exception {
    if (list || scenarios.isEmpty()) {
      Scenarios.names().forEach(System.out::println);
      return scenarios.isEmpty() && !list ? 2 : 0;
    }
    List<Pair> pairs = new ArrayList<>();
    for (String s : scenarios) {
      int colon = s.indexOf(':');
      pairs.add(colon < 0 ? new Pair(s, baseline) : new Pair(s.substring(0, colon), s.substring(colon + 1)));
    }
    if (pairs.stream().anyMatch(p -> p.scenario().equals(DedupPurgeBench.NAME))) {
      if (pairs.size() != 1 || pairs.get(0).baseline() != null) {
        throw new IllegalArgumentException(DedupPurgeBench.NAME + " runs alone, but the scenarios were " + scenarios);
      }
      try (BenchEnv env = BenchEnv.start()) {
        new DedupPurgeBench(env, System.out).run(prefill);
      }
      return 0;
    }
    if (pairs.stream().anyMatch(p -> DrainScenario.isDrain(p.scenario()))) {
      if (pairs.size() != 1 || markdown != null) {
        throw new IllegalArgumentException(
            "a drain scenario runs alone and without --markdown, but the scenarios were " + scenarios);
      }
      return drain(pairs.get(0).scenario(), pairs.get(0).baseline());
    }
    // fail on a bad name before starting any server
    for (Pair p : pairs) {
      Scenarios.create(p.scenario()).close();
      if (p.baseline() != null) {
        Scenarios.create(p.baseline()).close();
      }
    }
    // the distribution's form: with -am, an exec:java would also run in examples (the demo)
    MarkdownReport report = new MarkdownReport("mvn -B -DskipTests -pl ops -am package\n"
        + "ops/target/converge/bin/converge " + String.join(" ", spec.commandLine().getParseResult().originalArgs()),
        new BenchRunner.Plan(1, warmup, duration, runs), memoryRun);
    try (BenchEnv env = BenchEnv.start(prefill)) {
      BenchRunner runner = new BenchRunner(env, System.out, memoryRun);
      for (Pair p : pairs) {
        for (int t : threads) {
          List<Scenario> run = new ArrayList<>();
          run.add(Scenarios.create(p.scenario()));
          if (p.baseline() != null) {
            run.add(Scenarios.create(p.baseline()));
          }
          System.out.printf("%n== %s%s, %d thread(s)%n", p.scenario(),
              p.baseline() == null ? "" : " vs " + p.baseline(), t);
          report.add(run.get(0), p.baseline(), t, runner.run(run, new BenchRunner.Plan(t, warmup, duration, runs)));
        }
      }
    } catch (Exception | Error e) {
      report.failed(e);
      throw e;
    } finally {
      if (markdown != null) {
        report.write(markdown);
        System.out.println("\nwrote the result tables to " + markdown.toAbsolutePath());
      }
    }
    return 0;
  }

  /** Drain scenarios (outbox-drain, claim-mark): --threads is the number of relays. */
  private int drain(String scenario, String baseline) throws Exception {
    if (baseline != null && !DrainScenario.isDrain(baseline)) {
      throw new IllegalArgumentException(
          "a drain scenario compares only with another (outbox-drain, outbox-drain-sequential, claim-mark), but was "
              + baseline);
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
