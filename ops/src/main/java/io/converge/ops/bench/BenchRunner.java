package io.converge.ops.bench;

import io.converge.broker.internal.Closeables;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs scenarios with warm-up and repeated timed runs, and reports median and spread per scenario and,
 * for a pair, the ratio A/B run by run. The runs of paired scenarios are interleaved (A, B, B, A, ...)
 * so that the machine's noise hits both sides alike. Not thread-safe.
 */
public final class BenchRunner {

  /**
   * How to run.
   *
   * @param threads worker threads per scenario
   * @param warmup warm-up time per scenario, not measured
   * @param duration time of one measured run
   * @param runs measured runs per scenario
   */
  public record Plan(int threads, Duration warmup, Duration duration, int runs) {

    /** Validates the plan. */
    public Plan {
      if (threads < 1 || threads > 256) {
        throw new IllegalArgumentException("bench.threads must be between 1 and 256, but was " + threads);
      }
      if (runs < 1 || runs > 100) {
        throw new IllegalArgumentException("bench.runs must be between 1 and 100, but was " + runs);
      }
      if (duration.isNegative() || duration.isZero()) {
        throw new IllegalArgumentException("bench.duration must be positive, but was " + duration);
      }
      if (warmup.isNegative()) {
        throw new IllegalArgumentException("bench.warmup must not be negative, but was " + warmup);
      }
    }
  }

  /**
   * The measured throughputs (operations per second) of each scenario, one per run, and the memory
   * sampled after each scenario's memory run (empty without one), and the latencies over all measured
   * runs of each scenario that records them ({@link Scenario#latencies()}).
   */
  public record Result(Map<String, List<Double>> throughputs, Map<String, Memory> memory,
      Map<String, Latencies.Percentiles> latency, Map<String, CpuCost> cpu) {

    /** A result without CPU figures. */
    public Result(Map<String, List<Double>> throughputs, Map<String, Memory> memory,
        Map<String, Latencies.Percentiles> latency) {
      this(throughputs, memory, latency, Map.of());
    }

    /** A result without latencies. */
    public Result(Map<String, List<Double>> throughputs, Map<String, Memory> memory) {
      this(throughputs, memory, Map.of());
    }

    /** A result without memory figures. */
    public Result(Map<String, List<Double>> throughputs) {
      this(throughputs, Map.of());
    }
  }

  private final BenchEnv env;
  private final PrintStream out;
  private final Duration memoryRun;

  /** A runner on {@code env}, reporting to {@code out}, without memory runs. */
  public BenchRunner(BenchEnv env, PrintStream out) {
    this(env, out, Duration.ZERO);
  }

  /**
   * A runner on {@code env}, reporting to {@code out}; after its measured runs each scenario runs
   * {@code memoryRun} more (not measured) and the JVM's memory is sampled ({@link Memory}); zero: none.
   */
  public BenchRunner(BenchEnv env, PrintStream out, Duration memoryRun) {
    if (memoryRun.isNegative()) {
      throw new IllegalArgumentException("bench.memoryRun must not be negative, but was " + memoryRun);
    }
    this.env = env;
    this.out = out;
    this.memoryRun = memoryRun;
  }

  /** Runs {@code scenarios} (one, or a pair to compare: the first against the second) by {@code plan}. */
  public Result run(List<Scenario> scenarios, Plan plan) throws Exception {
    Map<String, List<Double>> results = new LinkedHashMap<>();
    Map<String, Memory> memory = new LinkedHashMap<>();
    Map<String, Latencies.Percentiles> latency = new LinkedHashMap<>();
    Map<String, CpuCost> cpu = new LinkedHashMap<>();
    CpuCost.Meter meter = CpuCost.Meter.of(env == null ? null : env.platform().postgres().dataSource());
    try {
      for (Scenario s : scenarios) {
        s.setUp(env, plan.threads());
        results.put(s.name(), new ArrayList<>());
        if (!plan.warmup().isZero()) {
          measure(s, plan.threads(), plan.warmup());
        }
        if (s.latencies() != null) {
          s.latencies().clear();
        }
      }
      for (int run = 0; run < plan.runs(); run++) {
        List<Scenario> order = new ArrayList<>(scenarios);
        if (run % 2 == 1) {
          java.util.Collections.reverse(order);
        }
        for (Scenario s : order) {
          CpuCost.Reading before = meter.now();
          Measured m = run(s, plan.threads(), plan.duration());
          cpu.put(s.name(), cpu.getOrDefault(s.name(), CpuCost.NONE).plus(m.ops(), before, meter.now()));
          double rate = m.rate();
          results.get(s.name()).add(rate);
          out.printf("  run %d/%d %-28s %,12.0f %s/s%n", run + 1, plan.runs(), s.name(), rate, s.unit());
        }
      }
      for (Scenario s : scenarios) {
        CpuCost c = cpu.get(s.name());
        out.println(c.line(s.name(), s.unit()));
      }
      for (Scenario s : scenarios) {
        Latencies.Percentiles p = s.latencies() == null ? null : s.latencies().percentiles();
        if (p != null) {
          latency.put(s.name(), p);
        }
      }
      if (!memoryRun.isZero()) {
        for (Scenario s : scenarios) {
          measure(s, plan.threads(), memoryRun);
          Memory m = Memory.sample();
          memory.put(s.name(), m);
          out.printf("  memory after a %s run of %-14s %s%n", memoryRun, s.name(), m.describe());
        }
      }
    } finally {
      // each scenario, even after one failed to close (a failed check on close); then the first failure
      Closeables.closeAll(scenarios);
    }
    report(scenarios, plan, results, latency);
    return new Result(results, memory, latency, cpu);
  }

  private void report(List<Scenario> scenarios, Plan plan, Map<String, List<Double>> results,
      Map<String, Latencies.Percentiles> latency) {
    out.printf("%nthreads=%d, %d runs of %s after %s warm-up%n", plan.threads(), plan.runs(), plan.duration(),
        plan.warmup());
    for (Scenario s : scenarios) {
      Stats st = Stats.of(results.get(s.name()));
      out.printf("  %-28s median %,10.0f %s/s   min %,10.0f   max %,10.0f   spread %4.0f%%%n",
          s.name(), st.median(), s.unit(), st.min(), st.max(), 100 * st.relativeSpread());
      Latencies.Percentiles p = latency.get(s.name());
      if (p != null) {
        out.printf("  %-28s latency p50 %,.0f ms   p99 %,.0f ms   (%,d %ss)%n", "", p.p50Millis(), p.p99Millis(),
            p.count(), s.unit());
      }
    }
    if (scenarios.size() == 2) {
      String a = scenarios.get(0).name();
      String b = scenarios.get(1).name();
      Stats ratio = Stats.of(Stats.ratios(results.get(a), results.get(b)));
      out.printf("  ratio %s / %s: median %.2f   min %.2f   max %.2f   (pair by pair)%n",
          a, b, ratio.median(), ratio.min(), ratio.max());
    }
  }

  /** Operations done in a timed run and its length. */
  record Measured(long ops, double seconds) {

    double rate() {
      return ops / seconds;
    }
  }

  /** Runs {@code s} on {@code threads} threads for {@code d}; returns operations per second. */
  static double measure(Scenario s, int threads, Duration d) throws Exception {
    return run(s, threads, d).rate();
  }

  /** Runs {@code s} on {@code threads} threads for {@code d}. */
  static Measured run(Scenario s, int threads, Duration d) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "bench-" + s.name());
      t.setDaemon(true);
      return t;
    });
    AtomicLong ops = new AtomicLong();
    AtomicReference<Exception> failure = new AtomicReference<>();
    long start = System.nanoTime();
    long end = start + d.toNanos();
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < threads; w++) {
        int worker = w;
        workers.add(pool.submit(() -> {
          long local = 0;
          try {
            while (System.nanoTime() < end && failure.get() == null) {
              local += s.runOnce(worker);
            }
          } catch (Exception e) {
            failure.compareAndSet(null, e);
          }
          ops.addAndGet(local);
        }));
      }
      for (Future<?> f : workers) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    if (failure.get() != null) {
      throw new IllegalStateException("scenario " + s.name() + " failed: " + failure.get(), failure.get());
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Measured(ops.get(), seconds);
  }
}
