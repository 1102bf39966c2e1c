package io.converge.saga;

import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.DatabaseErrors;
import io.converge.core.internal.Require;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the finished sagas, with their events and tickets, once they have been finished longer than the retention.
 * Final, and so purged, are: {@code COMPLETED} and {@code COMPENSATED} sagas, and {@code COMPENSATION_FAILED} and
 * {@code STOPPED} sagas that have a ticket; in every state only once every ticket of the saga was resolved by a person,
 * counted from its last transition ({@code updated_at}) and from the last resolution. A saga ends {@code COMPLETED} or
 * {@code COMPENSATED} with an open ticket by design (a Confirm or Cancel still failing, a misconfigured step): it stays
 * until the ticket is resolved. A {@code RUNNING} or {@code COMPENSATING} saga is never purged, however old, nor a
 * stopped one with an open ticket (or none): the coordinator or a person still needs its row. The events of a saga that
 * no longer exists (a late reply recorded after its purge) are deleted once older than the retention too. Age is
 * counted by the database's clock. A TCC global transaction is final only once every branch's Confirm or Cancel was
 * replied, so its barrier rows (the participant's, purged by {@code TccBarrierPurger}) no longer need the coordinator.
 *
 * <p>What is lost with a purged saga: its timeline ({@code converge trace}, {@code converge saga show}), and the
 * recognition of a {@code start} re-sent with its id (it would start a new saga). The retention is therefore at least
 * {@link #MIN_RETENTION}. Batches of sagas, oldest first, each its own short transaction, rows locked with
 * {@code SKIP LOCKED}. Thread-safe; several instances may purge at once.
 */
public final class SagaPurger {

  private static final Logger log = LoggerFactory.getLogger(SagaPurger.class);

  /** The default sagas per batch. */
  public static final int DEFAULT_BATCH_SIZE = 1_000;

  /**
   * The shortest retention: 24 hours. Longer than a broker's redelivery window (about 4 h 46 min), so a reply
   * redelivered to a finished saga still finds it (and is recorded as late, never applied); and as long as the
   * Idempotency-Key TTL (24 h), so a {@code start} re-sent within it finds its saga rather than beginning a new one.
   */
  public static final Duration MIN_RETENTION = Duration.ofHours(24);

  /** The default retention: 7 days. */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);

  private static final String FINISHED = """
      SELECT s.id, s.updated_at FROM converge_saga s
       WHERE s.state IN ('COMPLETED', 'COMPENSATED', 'COMPENSATION_FAILED', 'STOPPED')
         AND s.updated_at < now() - make_interval(secs => ?)
         AND (s.state IN ('COMPLETED', 'COMPENSATED')
              OR EXISTS (SELECT 1 FROM converge_saga_ticket t WHERE t.saga_id = s.id))
         AND NOT EXISTS (SELECT 1 FROM converge_saga_ticket t WHERE t.saga_id = s.id
                          AND (t.status <> 'RESOLVED' OR t.resolved_at IS NULL
                               OR t.resolved_at >= now() - make_interval(secs => ?)))""";
  private static final String PURGE = "WITH done AS (" + FINISHED + """
       ORDER BY s.updated_at LIMIT ? FOR UPDATE OF s SKIP LOCKED),
      events AS (DELETE FROM converge_saga_event e USING done d WHERE e.saga_id = d.id),
      tickets AS (DELETE FROM converge_saga_ticket t USING done d WHERE t.saga_id = d.id)
      DELETE FROM converge_saga s USING done d WHERE s.id = d.id""";
  /**
   * The only events written without a saga row: a reply to a saga already purged ({@code Driver}, "no such saga"),
   * and a person's resolution of the ticket such a reply opened ({@code SagaOps.resolve}).
   */
  private static final String ORPHANS = """
      DELETE FROM converge_saga_event e
       WHERE e.ctid IN (SELECT o.ctid FROM converge_saga_event o
                         WHERE o.kind IN ('LATE_REPLY', 'OPERATOR_RESOLVED')
                           AND o.at < now() - make_interval(secs => ?)
                           AND NOT EXISTS (SELECT 1 FROM converge_saga s WHERE s.id = o.saga_id) LIMIT ?)""";
  /** A ticket opened for a saga already purged (a compensation re-driven late), once resolved that long ago. */
  private static final String ORPHAN_TICKETS = """
      DELETE FROM converge_saga_ticket t
       WHERE t.id IN (SELECT o.id FROM converge_saga_ticket o
                       WHERE o.status = 'RESOLVED' AND o.resolved_at < now() - make_interval(secs => ?)
                         AND NOT EXISTS (SELECT 1 FROM converge_saga s WHERE s.id = o.saga_id) LIMIT ?)""";
  private static final String COUNT = "SELECT count(*) FROM (" + FINISHED + ") f";

  private final DataSource dataSource;
  private final Duration retention;
  private final int batchSize;

  /**
   * A purger.
   *
   * @param retention how long a finished saga is kept; at least {@link #MIN_RETENTION}
   * @param batchSize sagas per batch, 1..100000
   * @throws IllegalArgumentException naming the bad value
   */
  public SagaPurger(DataSource dataSource, Duration retention, int batchSize) {
    this.retention = Require.atLeast("converge.saga.retention", retention, MIN_RETENTION,
        MIN_RETENTION + " (the Idempotency-Key TTL, longer than the broker's redelivery window)");
    this.batchSize = Require.between("converge.saga.purge-batch-size", batchSize, 1, BatchPurger.MAX_BATCH_SIZE);
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  /** The retention. */
  public Duration retention() {
    return retention;
  }

  /**
   * Deletes every saga finished longer than the retention ago, with its events and tickets, batch by batch, stopping
   * after {@code maxBatches}; then as many batches of events of sagas that no longer exist.
   *
   * @return the number of sagas deleted
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   */
  public long purgeExpired(int maxBatches) {
    Require.between("saga.purge.maxBatches", maxBatches, 1, Integer.MAX_VALUE);
    long sagas = batches(PURGE, maxBatches, true);
    long orphans = batches(ORPHANS, maxBatches, false) + batches(ORPHAN_TICKETS, maxBatches, false);
    if (sagas > 0 || orphans > 0) {
      log.info("Saga purge: {} sagas finished more than {} ago deleted with their events and tickets, {} events and"
          + " resolved tickets of sagas gone", sagas, retention, orphans);
    }
    return sagas;
  }

  private long batches(String sql, int maxBatches, boolean sagas) {
    long total = 0;
    for (int i = 0; i < maxBatches; i++) {
      int n;
      try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
        if (!c.getAutoCommit()) {
          c.setAutoCommit(true);
        }
        int p = 1;
        ps.setDouble(p++, retention.toSeconds());
        if (sagas) {
          ps.setDouble(p++, retention.toSeconds());
        }
        ps.setInt(p, batchSize);
        n = ps.executeUpdate();
      } catch (SQLException e) {
        throw DatabaseErrors.translate("Cannot purge the finished sagas", null, e);
      }
      total += n;
      if (n == 0) {
        break;
      }
    }
    return total;
  }

  /** How many sagas {@link #purgeExpired} would delete now. */
  public long countExpired() {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(COUNT)) {
      ps.setDouble(1, retention.toSeconds());
      ps.setDouble(2, retention.toSeconds());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot count the finished sagas to purge", null, e);
    }
  }
}
