package io.converge.saga.tcc.micrometer;

import io.converge.saga.tcc.TccMetrics;
import io.converge.saga.tcc.TccOperation;
import io.converge.saga.tcc.TccOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TCC barrier metrics on Micrometer:
 * <ul>
 *   <li>{@code tcc.barrier.calls} (tags {@code operation}: {@code try}, {@code confirm}, {@code cancel};
 *       {@code outcome}: a {@link TccOutcome} name): every call the barrier decided;</li>
 *   <li>{@code tcc.hanging} (no tag): a Try refused because its Cancel came first (a hanging branch); alert on any
 *       increase, and list them with {@link io.converge.saga.tcc.TccBarrierOps#hangingRefused}.</li>
 * </ul>
 * Thread-safe; never throws into the barrier. Needs {@code io.micrometer:micrometer-core}.
 */
public final class MicrometerTccMetrics implements TccMetrics {

  private static final Logger LOG = LoggerFactory.getLogger(MicrometerTccMetrics.class);

  private final MeterRegistry registry;

  private MicrometerTccMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Counters on {@code registry}. */
  public static MicrometerTccMetrics of(MeterRegistry registry) {
    return new MicrometerTccMetrics(Objects.requireNonNull(registry, "registry"));
  }

  @Override
  public void called(TccOperation operation, TccOutcome outcome) {
    count("tcc.barrier.calls", "TCC branch calls decided by the barrier", "operation", operation.wireName(),
        "outcome", outcome.name());
  }

  @Override
  public void hanging(String tenant) {
    count("tcc.hanging", "Tries refused because their Cancel came first (hanging branches)");
  }

  private void count(String name, String description, String... tags) {
    try {
      Counter.builder(name).description(description).tags(tags).register(registry).increment();
    } catch (RuntimeException e) {
      // a registry that refuses a meter must not fail the participant's transaction
      LOG.warn("TCC metric {} not counted: {}", name, e.toString());
    }
  }
}
