package io.converge.consumer.spring;

import io.converge.core.internal.PurgeSchedule;
import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.Objects;
import java.util.function.IntToLongFunction;
import org.springframework.context.SmartLifecycle;

/**
 * Ties a {@link PurgeSchedule} of a bounded purge ({@code DedupPurger#purgeExpired},
 * {@code IdempotencyKeyPurger#purgeExpired}, and converge-saga's {@code SagaPurger#purgeExpired} and
 * {@code TccBarrierPurger#purgeExpired}) to the context: it runs every interval while the context runs. The one
 * purge bean of every Converge auto-configuration. Thread-safe.
 */
public final class PurgeScheduler implements SmartLifecycle {

  private static final int MAX_BATCHES_PER_RUN = 1_000;

  private final String name;
  private final IntToLongFunction purge;
  private final Duration interval;
  private PurgeSchedule schedule;

  /**
   * @param name the thread's name, also in the log
   * @param purge called with the most batches a run may delete
   * @param intervalProperty the property named when {@code interval} is under 1 s
   * @throws IllegalArgumentException naming {@code intervalProperty} when {@code interval} is under 1 s
   */
  public PurgeScheduler(String name, IntToLongFunction purge, Duration interval, String intervalProperty) {
    this.name = Objects.requireNonNull(name, "name");
    this.purge = Objects.requireNonNull(purge, "purge");
    this.interval = Require.atLeast(intervalProperty, interval, Duration.ofSeconds(1), "1s");
  }

  /** The schedule's name (its thread's). */
  public String name() {
    return name;
  }

  /** The time between runs. */
  public Duration interval() {
    return interval;
  }

  @Override
  public synchronized void start() {
    schedule = PurgeSchedule.start(name, interval, () -> purge.applyAsLong(MAX_BATCHES_PER_RUN));
  }

  @Override
  public synchronized void stop() {
    if (schedule != null) {
      schedule.close();
      schedule = null;
    }
  }

  @Override
  public synchronized boolean isRunning() {
    return schedule != null;
  }
}
