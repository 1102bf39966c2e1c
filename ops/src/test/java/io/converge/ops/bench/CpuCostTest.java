package io.converge.ops.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The CPU figure of {@code converge bench}: {@code /proc} parsed, the cost per 1,000 operations, the columns. */
class CpuCostTest {

  @Test
  void aStatLineIsReadAfterItsCommandEvenWithSpacesAndParentheses() {
    String line = "4242 (postgres: a (b) c) S 17 4242 4242 0 -1 4194560 900 0 0 0 123 45 6 7 20 0 1 0 100 0 0";
    assertThat(CpuCost.parseStat(line)).containsExactly(17, 123, 45, 6, 7);
  }

  @Test
  void theCostPerThousandOperationsAddsRunsAndKeepsAnUnknownServerUnknown() {
    CpuCost c = CpuCost.NONE.plus(2_000, 3_000_000_000L, 1_000_000_000L).plus(2_000, 1_000_000_000L, 1_000_000_000L);
    assertThat(c.jvmMillisPer1000()).isEqualTo(1000.0);
    assertThat(c.postgresMillisPer1000()).isEqualTo(500.0);
    assertThat(c.plus(1, 1, -1).postgresMillisPer1000()).isNaN();
    assertThat(CpuCost.NONE.jvmMillisPer1000()).isNaN();
  }

  @Test
  void aRunBetweenTwoReadingsIsPrintedInAllAndPerThousandOperations() {
    CpuCost c = CpuCost.NONE.plus(4_000, new CpuCost.Reading(1_000_000_000L, 5_000_000L),
        new CpuCost.Reading(1_250_000_000L, 7_000_000L));
    assertThat(c.total()).isEqualTo("JVM 250.0 ms, PostgreSQL 2.0 ms");
    assertThat(c.perThousand("row")).isEqualTo("JVM 62.5 ms, PostgreSQL 0.5 ms per 1,000 rows");
    assertThat(c.line("outbox-drain", "row"))
        .isEqualTo("  CPU of outbox-drain           JVM 62.5 ms, PostgreSQL 0.5 ms per 1,000 rows");
    CpuCost unknown = CpuCost.NONE.plus(1_000, new CpuCost.Reading(0, -1), new CpuCost.Reading(3_000_000L, -1));
    assertThat(unknown.total()).isEqualTo("JVM 3.0 ms, PostgreSQL -");
    assertThat(unknown.perThousand("msg")).isEqualTo("JVM 3.0 ms, PostgreSQL - per 1,000 msgs");
  }

  @Test
  void aMeterWithoutADataSourceReadsTheJvmOnly() {
    CpuCost.Reading r = CpuCost.Meter.of(null).now();
    assertThat(r.postgresNanos()).isEqualTo(-1);
    assertThat(r.jvmNanos()).isPositive();
  }

  @Test
  void theTableHasCpuColumnsWhenTheResultHasCpuFigures() {
    BenchRunner.Plan plan = new BenchRunner.Plan(1, Duration.ofSeconds(1), Duration.ofSeconds(3), 1);
    Scenario a = new IdleScenario("a", "msg");
    MarkdownReport report = new MarkdownReport("converge bench a", plan);
    report.add(a, null, 1, new BenchRunner.Result(Map.of("a", List.of(10.0)), Map.of(), Map.of(),
        Map.of("a", new CpuCost(30, 600_000_000L, -1))));
    assertThat(report.render()).contains("CPU ms/1,000 (JVM) | CPU ms/1,000 (PostgreSQL) |",
        "| `a` | 1 | 10 msg/s | 10 - 10 | - | - | - | - | 20000.0 | - |");
    MarkdownReport without = new MarkdownReport("converge bench a", plan);
    without.add(a, null, 1, new BenchRunner.Result(Map.of("a", List.of(10.0))));
    assertThat(without.render()).doesNotContain("CPU ms");
  }
}
