package io.converge.outbox.internal;

import io.converge.core.internal.Backoff;
import io.converge.outbox.OutboxRelayBuilder.Settings;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The polling relay's pace: back to back while a full batch came, the shortest idle poll after work,
 * doubling idle polls up to the longest while there is none, the outage backoff while the broker or the
 * database is unavailable (one warning at the first failure and every tenth, one when it is over). Used
 * by one thread.
 */
final class Pacing {

  private static final Logger LOG = LoggerFactory.getLogger(Pacing.class);

  private final Settings settings;
  private final DeliveryPolicy policy;
  /** The idle polls: the shortest doubling up to the longest, no jitter. */
  private final Backoff idlePolls;
  /** Empty polls in a row since the last work. */
  private int empty;
  private int failures;

  Pacing(Settings settings, DeliveryPolicy policy) {
    this.settings = settings;
    this.policy = policy;
    this.idlePolls = Backoff.withJitter(settings.idlePollMin(), settings.idlePollMax(), 2.0, 0.0, null);
  }

  /** The pause after a cycle that did {@code r}. */
  Duration after(RelayCycle.Result r) {
    if (r.brokerUnavailable()) {
      failures++;
      Duration pause = policy.outageDelay(failures);
      if (failures == 1 || failures % 10 == 0) {
        LOG.warn("Outbox relay {}: broker unavailable through {} ({} failures in a row); retrying in {}",
            settings.name(), settings.sink().name(), failures, pause);
      }
      return pause;
    }
    if (failures > 0) {
      LOG.warn("Outbox relay {}: broker available again after {} failures", settings.name(), failures);
    }
    failures = 0;
    int done = r.published() + r.refused();
    if (done >= settings.batchSize()) {
      empty = 0;
      return Duration.ZERO; // more work is waiting
    }
    if (done > 0) {
      empty = 0;
      return settings.idlePollMin();
    }
    empty = Math.min(empty + 1, 64); // past the cap long before 64; never overflows
    return idlePolls.ceiling(empty);
  }

  /** The pause after a cycle that failed with {@code e} (the database, or anything unexpected). */
  Duration afterFailure(Exception e) {
    failures++;
    Duration pause = policy.outageDelay(failures);
    LOG.warn("Outbox relay {}: cycle failed ({}); retrying in {}", settings.name(), e.toString(), pause);
    return pause;
  }
}
