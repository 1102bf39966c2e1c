package io.converge.saga.tcc.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.saga.tcc.TccOperation;
import io.converge.saga.tcc.TccOutcome;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** What each {@link io.converge.saga.tcc.TccMetrics} call counts, under which name and tags. */
class MicrometerTccMetricsTest {

  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final MicrometerTccMetrics metrics = MicrometerTccMetrics.of(registry);

  private double count(String name, String... tags) {
    var counter = registry.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  void hangingTriesAreCountedApartAndEveryCallByOperationAndOutcome() {
    metrics.hanging("shop");
    metrics.hanging("other");
    metrics.called(TccOperation.TRY, TccOutcome.HANGING_REFUSED);
    metrics.called(TccOperation.CANCEL, TccOutcome.EMPTY_ROLLBACK);
    metrics.called(TccOperation.CANCEL, TccOutcome.EMPTY_ROLLBACK);
    assertThat(count("tcc.hanging")).isEqualTo(2);
    assertThat(count("tcc.barrier.calls", "operation", "try", "outcome", "HANGING_REFUSED")).isEqualTo(1);
    assertThat(count("tcc.barrier.calls", "operation", "cancel", "outcome", "EMPTY_ROLLBACK")).isEqualTo(2);
    assertThat(count("tcc.barrier.calls", "operation", "confirm", "outcome", "RAN")).isZero();
  }
}
