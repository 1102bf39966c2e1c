package io.converge.consumer.spi;

import io.converge.consumer.IdempotentHandler;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * For {@link ConsumerBinding} implementations: calls {@link IdempotentHandler#releaseHeld()} every
 * {@code interval} on one daemon thread, so that messages held behind a parked message of their key run
 * once ops resumed or discarded it. A failed round (the database unavailable) is logged and tried again at
 * the next one. Thread-safe; {@link #close()} is idempotent.
 */
public final class HeldReleaser implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HeldReleaser.class);

  private final ScheduledExecutorService scheduler;

  private HeldReleaser(ScheduledExecutorService scheduler) {
    this.scheduler = scheduler;
  }

  /** Starts releasing {@code handler}'s held messages every {@code interval}. */
  public static HeldReleaser start(IdempotentHandler handler, Duration interval) {
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "converge-held-" + handler.group());
      t.setDaemon(true);
      return t;
    });
    scheduler.scheduleWithFixedDelay(() -> {
      try {
        int released = handler.releaseHeld();
        if (released > 0) {
          log.debug("Released {} held messages of group {}", released, handler.group());
        }
      } catch (RuntimeException e) {
        log.warn("Releasing held messages of group {} failed, trying again in {}: {}", handler.group(), interval,
            e.toString());
      }
    }, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    return new HeldReleaser(scheduler);
  }

  /** Stops the schedule; a round in progress is interrupted (its current message rolls back). */
  @Override
  public void close() {
    scheduler.shutdownNow();
  }
}
