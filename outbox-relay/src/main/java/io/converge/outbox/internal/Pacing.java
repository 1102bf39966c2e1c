package io.converge.outbox.internal;

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
  private Duration idle;
  private int failures;

  Pacing(Settings settings, DeliveryPolicy policy) {
    this.settings = settings;
    this.policy = policy;
    this.idle = settings.idlePollMin();
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
      idle = settings.idlePollMin();
      return Duration.ZERO; // more work is waiting
    }
    if (done > 0) {
      idle = settings.idlePollMin();
      return idle;
    }
    Duration pause = idle;
    idle = idle.multipliedBy(2).compareTo(settings.idlePollMax()) <= 0 ? idle.multipliedBy(2) : settings.idlePollMax();
    return pause;
  }

  /** The pause after a cycle that failed with {@code e} (the database, or anything unexpected). */
  Duration afterFailure(Exception e) {
    failures++;
    Duration pause = policy.outageDelay(failures);
    LOG.warn("Outbox relay {}: cycle failed ({}); retrying in {}", settings.name(), e.toString(), pause);
    return pause;
  }
}
