package io.converge.ops.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.bench.converge.DedupPurgeBench;
import io.converge.ops.bench.outbox.DrainBench;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The drain and dedup-purge commands of {@code converge bench}, against the embedded RocketMQ and PostgreSQL, print
 * the CPU of the bench JVM and of PostgreSQL (per 1,000 rows; the purge's in all too) and the JVM's memory after.
 */
class BenchCostIT {

  /** A figure of milliseconds: the embedded PostgreSQL runs on this machine, its CPU is known (CpuCostIT). */
  private static final String MS = "\\d+\\.\\d ms";

  @AutoClose
  private static final BenchEnv ENV = BenchEnv.start();

  @Test
  void aDrainPrintsItsCpuPerThousandRowsAndTheMemoryAfterItsRuns() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    new DrainBench(ENV, new PrintStream(bytes, true, StandardCharsets.UTF_8))
        .run(List.of("outbox-drain"), 1, 50, 500, 1);
    String out = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(out);
    assertThat(out).containsPattern("  CPU of outbox-drain +JVM \\d+\\.\\d ms, PostgreSQL " + MS + " per 1,000 rows\n")
        .containsPattern("  memory after the runs: RSS (\\d+ MiB|-), heap after GC \\d+ MiB\n");
    assertThat(out.indexOf("CPU of")).as("after the summary").isGreaterThan(out.indexOf("median"));
  }

  @Test
  void thePurgePrintsTheCpuOfEachWayAndTheMemoryAfter() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    new DedupPurgeBench(ENV, new PrintStream(bytes, true, StandardCharsets.UTF_8)).run(2_000);
    String out = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(out);
    for (String way : List.of("drop the day's partition", "batch DELETE \\(catch-all\\)")) {
      assertThat(out).containsPattern("  CPU of " + way + " +JVM \\d+\\.\\d ms, PostgreSQL " + MS
          + " in all; JVM \\d+\\.\\d ms, PostgreSQL " + MS + " per 1,000 rows\n");
    }
    assertThat(out).containsPattern("memory after the purges: RSS (\\d+ MiB|-), heap after GC \\d+ MiB\n");
  }
}
