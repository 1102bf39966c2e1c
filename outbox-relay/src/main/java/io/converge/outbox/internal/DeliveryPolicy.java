package io.converge.outbox.internal;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.RelayMetrics;
import io.converge.outbox.spi.SendAllResult;
import io.converge.core.BrokerUnavailableException;
import io.converge.core.internal.Backoff;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one delivery policy of the outbox, for the polling and the CDC relay: what a send's outcome does
 * to the rows. Sent rows are marked published; a refusal counts an attempt and makes the row due again
 * after the retry backoff, and at {@code maxAttempts} parks it (its key's later rows wait, with the
 * reason); an outage of the broker counts nothing and makes the row due again after the outage
 * backoff's base. It also gives the pauses of the relays' loops: {@link #retryDelay} between refused
 * attempts, {@link #outageDelay} while the broker or the database is unavailable. Immutable; thread-safe.
 *
 * @param rows the row store it writes to
 * @param maxAttempts refusals of a row before it is parked
 * @param retry the wait after a refusal, by attempt
 * @param outageBase how long a row the broker could not take waits
 * @param outage the loops' wait while the broker or the database is unavailable, by failures in a row
 * @param metrics where parked keys are counted
 */
public record DeliveryPolicy(OutboxRows rows, int maxAttempts, Backoff retry, Duration outageBase, Backoff outage,
    RelayMetrics metrics) {

  private static final Logger LOG = LoggerFactory.getLogger(DeliveryPolicy.class);

  /**
   * A policy with jittered backoffs: refused rows from {@code retryBase} doubling up to {@code retryMax},
   * outages from {@code outageBase} up to {@code outageMax}.
   */
  public static DeliveryPolicy of(OutboxRows rows, int maxAttempts, Duration retryBase, Duration retryMax,
      Duration outageBase, Duration outageMax, RelayMetrics metrics) {
    return new DeliveryPolicy(rows, maxAttempts, jittered(retryBase, retryMax), outageBase,
        jittered(outageBase, outageMax),
        metrics);
  }

  /** Exponential backoff from {@code base} to {@code max} with jitter from a thread-local random. */
  public static Backoff jittered(Duration base, Duration max) {
    return new Backoff(base, max, () -> ThreadLocalRandom.current().nextDouble());
  }

  /** The pause after the {@code refusals}-th refused attempt in a row. */
  public Duration retryDelay(int refusals) {
    return retry.delay(refusals);
  }

  /** The pause after the {@code failures}-th failure in a row of the broker or the database. */
  public Duration outageDelay(int failures) {
    return outage.delay(failures);
  }

  /**
   * What one send did, after {@link #settle}.
   *
   * @param published rows sent and marked published
   * @param refused rows the broker refused (each counted as an attempt)
   * @param parked of those, rows parked now (their key waits for a resume)
   * @param postponed rows not sent because the broker was unavailable (no attempt counted)
   */
  public record Settled(int published, int refused, int parked, int postponed) {
  }

  /**
   * Writes the outcome of {@code result} (sent by {@code sinkName}) to the rows, in the caller's
   * transaction, and counts parked keys in the metrics.
   */
  public Settled settle(Connection c, SendAllResult result, String sinkName) throws SQLException {
    List<Long> sent = new ArrayList<>(result.sent().size());
    for (OutboxRecord r : result.sent()) {
      sent.add(r.seq());
    }
    int refused = 0;
    int parked = 0;
    int postponed = 0;
    for (SendAllResult.Failure f : result.failed()) {
      OutboxRecord row = f.record();
      Exception e = f.error();
      if (e instanceof BrokerUnavailableException) {
        postponed++;
        LOG.debug("Broker unavailable for outbox row {}: {}", row, e.toString());
        rows.postpone(c, row, e.toString(), outageBase);
        continue;
      }
      refused++;
      int attempts = row.attempts() + 1;
      rows.refuse(c, row, e.toString(), retry.delay(attempts), maxAttempts);
      if (attempts >= maxAttempts) {
        parked++;
        metrics.parked(row.orderKey());
        LOG.warn("Outbox message {} (key {}, topic {}) parked after {} refused attempts: {}", row.messageId(),
            row.orderKey(), row.topic(), attempts, e.toString());
      } else {
        LOG.warn("Outbox message {} (key {}) refused by {} (attempt {}): {}", row.messageId(), row.orderKey(),
            sinkName, attempts, e.toString());
      }
    }
    rows.markPublished(c, sent);
    return new Settled(sent.size(), refused, parked, postponed);
  }
}
