package io.converge.ops.bench.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.bench.BenchEnv;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every drain scenario of {@code converge bench} against the embedded RocketMQ and PostgreSQL: two
 * fills and drains in a row (as the bench's warm-up and runs do) each leave no unpublished row and
 * report a positive rate. For {@code cdc-drain} this proves the relay, stopped while the outbox is
 * filled, picks up every row written while it was down on each restart.
 */
class DrainScenarioIT {

  @AutoClose
  private static BenchEnv env;

  @BeforeAll
  static void servers() {
    env = BenchEnv.start();
  }

  @ParameterizedTest
  @EnumSource(DrainScenario.Mode.class)
  void drainsEveryFilledRowTwice(DrainScenario.Mode mode) throws Exception {
    try (DrainScenario s = new DrainScenario(mode, 50)) {
      s.setUp(env, 1);
      for (int round = 0; round < 2; round++) {
        s.fill(600);
        assertThat(s.unpublished()).isEqualTo(600);
        assertThat(s.drain(600)).isPositive();
        assertThat(s.unpublished()).isZero();
      }
    }
  }
}
