package io.converge.saga.micrometer;

import io.converge.saga.SagaMetrics;
import io.converge.saga.SagaState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Saga metrics on Micrometer:
 * <ul>
 *   <li>{@code saga.started}, {@code saga.completed}, {@code saga.compensated} (tag {@code definition});</li>
 *   <li>{@code saga.failed} (tags {@code definition}, {@code state}: {@code COMPENSATION_FAILED} or {@code STOPPED},
 *       each with an open ticket), counted apart from the sagas that ended well;</li>
 *   <li>{@code saga.set.aside} (tag {@code definition}): a saga that could not be driven, tried again later;</li>
 *   <li>{@code saga.replies.ignored} (tags {@code definition}, {@code kind}: {@code DUPLICATE_REPLY},
 *       {@code LATE_REPLY});</li>
 *   <li>{@code saga.compensations.after.purge} (tag {@code step}): a compensation that succeeded for a saga
 *       already purged (re-driven late), which may have undone its step twice: an {@code ANOMALY} ticket is open;</li>
 *   <li>{@code saga.compensations.sent} and {@code saga.compensations.delayed} (tag {@code participant}): the
 *       second counts compensations held back by the participant's rate limit;</li>
 *   <li>{@code saga.step.latency} (timer, tags {@code definition}, {@code step}, {@code direction}): from a step's
 *       command first sent to its reply applied, re-asks included;</li>
 *   <li>{@code saga.hanging.refused} (tags {@code participant}, {@code step}): a forward command refused because
 *       its compensation came first.</li>
 * </ul>
 * Thread-safe; never throws into the coordinator. Needs {@code io.micrometer:micrometer-core}.
 */
public final class MicrometerSagaMetrics implements SagaMetrics {

  private static final Logger LOG = LoggerFactory.getLogger(MicrometerSagaMetrics.class);

  private final MeterRegistry registry;

  private MicrometerSagaMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Counters on {@code registry}. */
  public static MicrometerSagaMetrics of(MeterRegistry registry) {
    return new MicrometerSagaMetrics(Objects.requireNonNull(registry, "registry"));
  }

  @Override
  public void started(String definition) {
    count("saga.started", "Sagas started", "definition", definition);
  }

  @Override
  public void ended(String definition, SagaState state) {
    switch (state) {
      case COMPLETED -> count("saga.completed", "Sagas completed", "definition", definition);
      case COMPENSATED -> count("saga.compensated", "Sagas whose done steps were all compensated", "definition",
          definition);
      case COMPENSATION_FAILED, STOPPED -> count("saga.failed",
          "Sagas stopped for a person (a compensation failed three times, a money anomaly), each with a ticket",
          "definition", definition, "state", state.name());
      default -> {
        // RUNNING and COMPENSATING are not ends: nothing to count
      }
    }
  }

  @Override
  public void stepReplied(String definition, String step, String direction, Duration latency) {
    try {
      Timer.builder("saga.step.latency").description("From a step's command first sent to its reply applied")
          .tags("definition", definition, "step", step, "direction", direction).publishPercentileHistogram()
          .register(registry).record(latency.isNegative() ? Duration.ZERO : latency);
    } catch (RuntimeException e) {
      LOG.warn("Saga metric saga.step.latency not recorded: {}", e.toString());
    }
  }

  @Override
  public void setAside(String definition) {
    count("saga.set.aside", "Sagas that could not be driven and wait to be tried again", "definition", definition);
  }

  @Override
  public void replyIgnored(String definition, String kind) {
    count("saga.replies.ignored", "Replies recorded but not applied (duplicate or late)", "definition", definition,
        "kind", kind);
  }

  @Override
  public void compensationAfterPurge(String step) {
    count("saga.compensations.after.purge", "Compensations that succeeded for a saga already purged (ANOMALY ticket)",
        "step", step);
  }

  @Override
  public void compensationSent(String participant) {
    count("saga.compensations.sent", "Compensation commands sent", "participant", participant);
  }

  @Override
  public void compensationDelayed(String participant) {
    count("saga.compensations.delayed", "Compensations held back by the participant's rate limit", "participant",
        participant);
  }

  @Override
  public void hangingRefused(String participant, String step) {
    count("saga.hanging.refused", "Forward commands refused because their compensation came first", "participant",
        participant, "step", step);
  }

  private void count(String name, String description, String... tags) {
    try {
      Counter.builder(name).description(description).tags(tags).register(registry).increment();
    } catch (RuntimeException e) {
      // a registry that refuses a meter (a clash of tag keys with another meter of that name) must not fail a
      // saga's transition
      LOG.warn("Saga metric {} not counted: {}", name, e.toString());
    }
  }
}
