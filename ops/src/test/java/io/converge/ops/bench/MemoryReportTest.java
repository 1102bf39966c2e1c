package io.converge.ops.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The memory figure of {@code converge bench}: sampled after a memory run, shown in the Markdown table. */
class MemoryReportTest {

  @Test
  void aSampleHasTheHeapAndOnLinuxTheResidentSet() {
    Memory m = Memory.sample();
    assertThat(m.heapBytes()).isPositive();
    if (System.getProperty("os.name").toLowerCase().contains("linux")) {
      assertThat(m.rssBytes()).isGreaterThanOrEqualTo(m.heapBytes());
    }
    assertThat(Memory.mib(3L << 20)).isEqualTo("3 MiB");
    assertThat(Memory.mib(-1)).isEqualTo("-");
    assertThat(new Memory(300L << 20, 40L << 20).describe()).isEqualTo("RSS 300 MiB, heap after GC 40 MiB");
    assertThat(new Memory(-1, 40L << 20).describe()).isEqualTo("RSS -, heap after GC 40 MiB");
  }

  @Test
  void theRunnerSamplesEachScenarioAfterItsMemoryRun() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Scenario counting = new NamedScenario("counting", "op") {

      @Override
      public void setUp(BenchEnv env, int threads) {
      }

      @Override
      public int runOnce(int worker) {
        calls.incrementAndGet();
        return 1;
      }

      @Override
      public void close() {
      }
    };
    BenchRunner runner = new BenchRunner(null, System.out, Duration.ofMillis(100));
    BenchRunner.Result result = runner.run(List.of(counting),
        new BenchRunner.Plan(1, Duration.ZERO, Duration.ofMillis(50), 1));
    assertThat(result.memory()).containsKey("counting");
    assertThat(result.memory().get("counting").heapBytes()).isPositive();
  }

  @Test
  void theTableHasMemoryColumnsOnlyWithAMemoryRun() {
    BenchRunner.Plan plan = new BenchRunner.Plan(1, Duration.ofSeconds(1), Duration.ofSeconds(3), 1);
    Scenario a = new IdleScenario("a", "msg");
    MarkdownReport with = new MarkdownReport("converge bench a", plan, Duration.ofSeconds(60));
    with.add(a, null, 1, new BenchRunner.Result(Map.of("a", List.of(10.0)),
        Map.of("a", new Memory(300L << 20, 40L << 20))));
    assertThat(with.render()).contains("after a further 60 s run", "RSS | heap after GC |",
        "| `a` | 1 | 10 msg/s | 10 - 10 | - | - | - | - | 300 MiB | 40 MiB |");

    MarkdownReport without = new MarkdownReport("converge bench a", plan);
    without.add(a, null, 1, new BenchRunner.Result(Map.of("a", List.of(10.0))));
    assertThat(without.render()).doesNotContain("RSS").contains("| `a` | 1 | 10 msg/s | 10 - 10 | - | - | - | - |\n");
  }

  @Test
  void aNegativeMemoryRunIsRefused() {
    assertThatThrownBy(() -> new BenchRunner(null, System.out, Duration.ofSeconds(-1)))
        .hasMessage("bench.memoryRun must not be negative, but was PT-1S");
  }
}
