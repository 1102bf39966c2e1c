package io.converge.saga.spring;

import io.converge.core.internal.PurgeSchedule;
import io.converge.core.internal.Require;
import io.converge.saga.tcc.TccBarrierPurger;
import java.time.Duration;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the {@link TccBarrierPurger} on the shared {@link PurgeSchedule} (the scheduler of consumer-idem's dedup and
 * Idempotency-Key purges) every interval while the context runs.
 */
final class TccPurgeScheduler implements SmartLifecycle {

  private static final int MAX_BATCHES_PER_RUN = 1_000;

  private final TccBarrierPurger purger;
  private final Duration interval;
  private PurgeSchedule schedule;

  TccPurgeScheduler(TccBarrierPurger purger, Duration interval) {
    this.purger = purger;
    this.interval = Require.atLeast("converge.saga.tcc.purge-interval", interval, Duration.ofSeconds(1), "1s");
  }

  /** The purger run. */
  TccBarrierPurger purger() {
    return purger;
  }

  /** The time between runs. */
  Duration interval() {
    return interval;
  }

  @Override
  public synchronized void start() {
    schedule = PurgeSchedule.start("converge-tcc-barrier-purge", interval,
        () -> purger.purgeExpired(MAX_BATCHES_PER_RUN));
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
