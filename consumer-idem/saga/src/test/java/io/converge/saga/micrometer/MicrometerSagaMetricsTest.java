package io.converge.saga.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.converge.saga.SagaState;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** What each {@link io.converge.saga.SagaMetrics} call counts, under which name and tags. */
class MicrometerSagaMetricsTest {

  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final MicrometerSagaMetrics metrics = MicrometerSagaMetrics.of(registry);

  private double count(String name, String... tags) {
    var counter = registry.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  void endsAreCountedByOutcomeAndFailuresApart() {
    metrics.started("order");
    metrics.started("order");
    metrics.ended("order", SagaState.COMPLETED);
    metrics.ended("order", SagaState.COMPENSATED);
    metrics.ended("order", SagaState.COMPENSATION_FAILED);
    metrics.ended("order", SagaState.STOPPED);
    metrics.ended("order", SagaState.STOPPED);
    metrics.ended("order", SagaState.RUNNING);

    assertThat(count("saga.started", "definition", "order")).isEqualTo(2);
    assertThat(count("saga.completed", "definition", "order")).isEqualTo(1);
    assertThat(count("saga.compensated", "definition", "order")).isEqualTo(1);
    assertThat(count("saga.failed", "definition", "order", "state", "COMPENSATION_FAILED")).isEqualTo(1);
    assertThat(count("saga.failed", "definition", "order", "state", "STOPPED")).isEqualTo(2);
    assertThat(registry.find("saga.failed").counters()).as("no end counted for a state that is not one")
        .hasSize(2);
  }

  @Test
  void repliesCompensationsAndRefusalsAreCountedWithTheirTags() {
    metrics.replyIgnored("order", "DUPLICATE_REPLY");
    metrics.replyIgnored("order", "LATE_REPLY");
    metrics.replyIgnored("order", "LATE_REPLY");
    metrics.compensationSent("inventory");
    metrics.compensationDelayed("inventory");
    metrics.compensationDelayed("inventory");
    metrics.hangingRefused("inventory", "reserve");
    metrics.setAside("gone-v0");
    metrics.compensationAfterPurge("reserve");

    assertThat(count("saga.replies.ignored", "definition", "order", "kind", "DUPLICATE_REPLY")).isEqualTo(1);
    assertThat(count("saga.replies.ignored", "definition", "order", "kind", "LATE_REPLY")).isEqualTo(2);
    assertThat(count("saga.compensations.sent", "participant", "inventory")).isEqualTo(1);
    assertThat(count("saga.compensations.delayed", "participant", "inventory")).isEqualTo(2);
    assertThat(count("saga.hanging.refused", "participant", "inventory", "step", "reserve")).isEqualTo(1);
    assertThat(count("saga.set.aside", "definition", "gone-v0")).isEqualTo(1);
    assertThat(count("saga.compensations.after.purge", "step", "reserve")).isEqualTo(1);
  }

  @Test
  void stepLatenciesAreTimedPerStepAndDirection() {
    metrics.stepReplied("order", "debit", "forward", java.time.Duration.ofMillis(300));
    metrics.stepReplied("order", "debit", "forward", java.time.Duration.ofMillis(500));
    metrics.stepReplied("order", "debit", "compensate", java.time.Duration.ofMillis(-5));
    var forward = registry.find("saga.step.latency").tags("definition", "order", "step", "debit", "direction",
        "forward").timer();
    assertThat(forward.count()).isEqualTo(2);
    assertThat(forward.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(800.0);
    assertThat(registry.find("saga.step.latency").tags("direction", "compensate").timer().totalTime(
        java.util.concurrent.TimeUnit.MILLISECONDS)).as("a clock that went back counts zero").isZero();
  }

  @Test
  void aRegistryThatRefusesAMeterDoesNotFailTheSaga() {
    // a registry whose filter throws (a misconfigured meter filter in the service)
    MeterRegistry refusing = new SimpleMeterRegistry();
    refusing.config().meterFilter(new io.micrometer.core.instrument.config.MeterFilter() {

      @Override
      public io.micrometer.core.instrument.config.MeterFilterReply accept(io.micrometer.core.instrument.Meter.Id id) {
        throw new IllegalStateException("refused " + id.getName());
      }
    });
    assertThatCode(() -> MicrometerSagaMetrics.of(refusing).started("order")).doesNotThrowAnyException();
  }
}
