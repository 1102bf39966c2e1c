package io.converge.ops.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatsTest {

  @Test
  void medianOfOddAndEvenCounts() {
    assertThat(Stats.of(List.of(3.0, 1.0, 2.0)).median()).isEqualTo(2.0);
    assertThat(Stats.of(List.of(4.0, 1.0, 3.0, 2.0)).median()).isEqualTo(2.5);
  }

  @Test
  void spreadIsRelativeToTheMedian() {
    Stats s = Stats.of(List.of(90.0, 100.0, 120.0));
    assertThat(s.min()).isEqualTo(90.0);
    assertThat(s.max()).isEqualTo(120.0);
    assertThat(s.relativeSpread()).isCloseTo(0.30, within(1e-9));
  }

  @Test
  void ratiosArePairByPair() {
    assertThat(Stats.ratios(List.of(50.0, 60.0), List.of(100.0, 200.0))).containsExactly(0.5, 0.3);
  }

  @Test
  void emptyOrUnpairedInputIsRefused() {
    assertThatThrownBy(() -> Stats.of(List.of())).hasMessageContaining("at least one");
    assertThatThrownBy(() -> Stats.ratios(List.of(1.0), List.of())).hasMessageContaining("1 and 0");
  }
}
