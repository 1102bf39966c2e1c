package io.converge.ops.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The measuring loop, on a pure in-memory scenario (no servers: it checks counting, not speed). */
class BenchRunnerTest {

  @Test
  void countsEveryOperationOfEveryThread() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Scenario counting = new Fake(calls, false);
    double rate = BenchRunner.measure(counting, 3, Duration.ofMillis(200));
    assertThat(calls.get()).isPositive();
    assertThat(rate).isPositive();
  }

  @Test
  void aFailingScenarioFailsTheRunNamingIt() {
    Scenario failing = new Fake(new AtomicInteger(), true);
    // a window long enough for a worker to start on a loaded machine (one that starts after it ends never fails);
    // the first call fails and ends the run, so the test does not take the window
    assertThatThrownBy(() -> BenchRunner.measure(failing, 2, Duration.ofSeconds(30)))
        .hasMessageContaining("scenario fake failed");
  }

  @Test
  void badPlansAreRefusedWithTheValue() {
    assertThatThrownBy(() -> new BenchRunner.Plan(0, Duration.ZERO, Duration.ofSeconds(1), 1))
        .hasMessage("bench.threads must be between 1 and 256, but was 0");
  }

  @Test
  void unknownScenarioNamesTheKnownOnes() {
    assertThatThrownBy(() -> Scenarios.create("nope")).hasMessageContaining("rocketmq-send");
  }

  private record Fake(AtomicInteger calls, boolean fail) implements Scenario {

    @Override
    public String name() {
      return "fake";
    }

    @Override
    public void setUp(BenchEnv env, int threads) {
    }

    @Override
    public int runOnce(int worker) {
      if (fail) {
        throw new IllegalStateException("boom");
      }
      calls.incrementAndGet();
      return 1;
    }

    @Override
    public void close() {
    }
  }
}
