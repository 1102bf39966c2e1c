package io.converge.ops.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code converge bench --markdown}: the page quotes its command, the machine and JVM, and one row per result. */
class MarkdownReportTest {

  @Test
  void aPairIsOneRowWithItsThroughputAndItsRatioRunByRun() {
    MarkdownReport report = new MarkdownReport("converge bench a:b", new BenchRunner.Plan(1, Duration.ofSeconds(1),
        Duration.ofSeconds(3), 3));
    Map<String, List<Double>> runs = new LinkedHashMap<>();
    runs.put("a", List.of(100.0, 200.0, 300.0));
    runs.put("b", List.of(400.0, 400.0, 600.0));
    report.add(new IdleScenario("a", "msg"), "b", 8, new BenchRunner.Result(runs));

    String page = report.render();

    assertThat(page).contains("converge bench a:b", "- machine: ", "- JVM: ", "- date: ", "3 runs of 3 s",
        "1 s of warm-up");
    assertThat(page).contains("| `a` | 8 | 200 msg/s | 100 - 300 | `b` | 400 | 0.50 | 0.25 - 0.50 |");
  }
}
