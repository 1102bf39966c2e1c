package io.converge.ops.bench.outbox;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.CpuCost;
import io.converge.ops.bench.Memory;
import io.converge.ops.bench.Stats;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs drain scenarios: a warm-up drain of a tenth of the rows, then {@code runs} measured drains of
 * {@code rows} rows per scenario, a pair interleaved (A, B, B, A, ...); prints rows/s per run, median
 * and spread, the ratio A/B run by run, the CPU per 1,000 rows of the bench JVM and of PostgreSQL over the
 * measured drains (not their fills: those run in the bench JVM too; for the CDC drains the connector's start and
 * first batch, which their rate leaves out, are counted) and the JVM's memory after the runs. Not
 * thread-safe.
 */
public final class DrainBench {

  private final BenchEnv env;
  private final PrintStream out;

  /** A bench on {@code env}, reporting to {@code out}. */
  public DrainBench(BenchEnv env, PrintStream out) {
    this.env = env;
    this.out = out;
  }

  /** Drains {@code rows} rows {@code runs} times with {@code relays} relays per scenario of {@code names}. */
  public void run(List<String> names, int relays, int batchSize, int rows, int runs) throws Exception {
    List<DrainScenario> scenarios = new ArrayList<>();
    Map<String, List<Double>> results = new LinkedHashMap<>();
    Map<String, CpuCost> cpu = new LinkedHashMap<>();
    CpuCost.Meter meter = CpuCost.Meter.of(env.platform().postgres().dataSource());
    Memory memory;
    try {
      for (String name : names) {
        DrainScenario s = new DrainScenario(DrainScenario.mode(name), batchSize);
        scenarios.add(s);
        s.setUp(env, relays);
        int warm = Math.max(1, rows / 10);
        s.fill(warm);
        s.drain(warm);
        results.put(s.name(), new ArrayList<>());
      }
      for (int run = 0; run < runs; run++) {
        List<DrainScenario> order = new ArrayList<>(scenarios);
        if (run % 2 == 1) {
          Collections.reverse(order);
        }
        for (DrainScenario s : order) {
          s.fill(rows);
          CpuCost.Reading before = meter.now();
          double rate = s.drain(rows);
          cpu.put(s.name(), cpu.getOrDefault(s.name(), CpuCost.NONE).plus(rows, before, meter.now()));
          results.get(s.name()).add(rate);
          out.printf("  run %d/%d %-24s %,10.0f rows/s%n", run + 1, runs, s.name(), rate);
        }
      }
      memory = Memory.sample();
    } finally {
      scenarios.forEach(DrainScenario::close);
    }
    out.printf("%nrelays=%d, batch=%d, %d runs of %,d rows (%d keys, 1 KiB payload)%n", relays, batchSize, runs, rows,
        DrainScenario.KEYS);
    for (Map.Entry<String, List<Double>> e : results.entrySet()) {
      Stats st = Stats.of(e.getValue());
      out.printf("  %-24s median %,10.0f rows/s   min %,10.0f   max %,10.0f   spread %4.0f%%%n", e.getKey(),
          st.median(), st.min(), st.max(), 100 * st.relativeSpread());
    }
    if (names.size() == 2) {
      Stats ratio = Stats.of(Stats.ratios(results.get(names.get(0)), results.get(names.get(1))));
      out.printf("  ratio %s / %s: median %.2f   min %.2f   max %.2f   (pair by pair)%n", names.get(0), names.get(1),
          ratio.median(), ratio.min(), ratio.max());
    }
    cpu.forEach((name, c) -> out.println(c.line(name, "row")));
    out.println("  memory after the runs: " + memory.describe());
  }
}
