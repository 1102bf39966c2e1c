package io.converge.ops.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LatenciesTest {

  @Test
  void nearestRankPercentilesInMillis() {
    Latencies l = new Latencies();
    assertThat(l.percentiles()).isNull();
    for (int ms = 100; ms >= 1; ms--) {
      l.record(ms * 1_000_000L);
    }
    Latencies.Percentiles p = l.percentiles();
    assertThat(p.count()).isEqualTo(100);
    assertThat(p.p50Millis()).isEqualTo(50.0);
    assertThat(p.p99Millis()).isEqualTo(99.0);
    l.clear();
    assertThat(l.percentiles()).isNull();
  }

  @Test
  void theReportShowsLatencyColumnsAndTheScenarioReference() {
    Scenario a = new IdleScenario("a", "order", "X publishes 575 per second");
    MarkdownReport report = new MarkdownReport("converge bench a",
        new BenchRunner.Plan(8, Duration.ZERO, Duration.ofSeconds(1), 1));
    report.add(a, null, 8, new BenchRunner.Result(Map.of("a", List.of(600.0)), Map.of(),
        Map.of("a", new Latencies.Percentiles(12.4, 87.6, 600))));
    String md = report.render();
    assertThat(md).contains("| latency p50 | latency p99 |")
        .contains("| `a` | 8 | 600 order/s | 600 - 600 | - | - | - | - | 12 ms | 88 ms |")
        .contains("- `a`: X publishes 575 per second");
  }
}
