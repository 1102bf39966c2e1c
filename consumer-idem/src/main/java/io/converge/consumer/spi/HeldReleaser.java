package io.converge.consumer.spi;

import io.converge.consumer.IdempotentHandler;
import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * For {@link ConsumerBinding} implementations: calls {@link IdempotentHandler#releaseHeld} with the binding's
 * topics every {@code interval} on one daemon thread, so that messages held behind a parked message of their key
 * (and the ones ops marked for re-drive) run once ops resumed or discarded it. The rows of the group's other
 * topics are left to their own handlers. A failed round (the database unavailable) is logged and tried again at
 * the next one. Thread-safe; {@link #close()} is idempotent.
 */
public final class HeldReleaser implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HeldReleaser.class);

  private final ScheduledExecutorService scheduler;

  private HeldReleaser(ScheduledExecutorService scheduler) {
    this.scheduler = scheduler;
  }

  /**
   * Starts releasing {@code handler}'s held messages on {@code topics} every {@code interval}.
   *
   * @param topics the topics the binding delivers to {@code handler}, as {@code IncomingMessage.topic()} names
   *     them; not empty
   * @throws IllegalArgumentException when {@code topics} is empty
   */
  public static HeldReleaser start(IdempotentHandler handler, Collection<String> topics, Duration interval) {
    List<String> scope = List.copyOf(topics);
    Require.that(!scope.isEmpty(), "releaser topics of group " + handler.group(), "not be empty", scope);
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "converge-held-" + handler.group());
      t.setDaemon(true);
      return t;
    });
    scheduler.scheduleWithFixedDelay(() -> {
      try {
        int released = handler.releaseHeld(scope);
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
