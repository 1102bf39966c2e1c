package io.converge.saga;

import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.DatabaseErrors;
import io.converge.core.internal.Require;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes a {@link SagaParticipant}'s barrier rows ({@code converge_saga_branch}) once no command of their saga step
 * can still arrive and be applied wrongly because they are gone. A step's rows (its forward row, its compensation row)
 * go together, once the youngest of them is older than the {@link SagaBranchRetention}, by the database's clock (the
 * one that wrote {@code created_at}: an instance whose clock runs ahead never purges a row early).
 *
 * <p>Why that is safe:
 *
 * <ul>
 *   <li>A step whose compensation row exists is finished. A compensation re-sent after the purge finds no row, records
 *       the forward row {@code PREVENTED} and itself {@code EMPTY}, and runs nothing (the undo ran once, before); a
 *       forward command never follows its compensation from the coordinator, and a copy redelivered by the broker
 *       arrives within its redelivery window (hours), far inside the retention.</li>
 *   <li>A forward row without a compensation row belongs to a saga that completed (the common case) or to one still
 *       open: the coordinator may re-send the command, compensate it, or an operator may {@code converge saga
 *       retry|compensate} it. Purged early, a compensation would find no forward row and undo nothing (money kept),
 *       a re-sent forward command would run twice. The participant cannot tell which, so the coordinator carries the
 *       other half: it sends no command of a saga older than its {@code converge.saga.participant-retention} less
 *       {@link SagaBranchRetention#SEND_MARGIN} (the saga stops with a ticket; an operator's action is refused with
 *       {@link SagaTooOldException}), and its deadline plus retry window are validated to fit in it
 *       ({@link SagaBranchRetention#covering}). A forward row is written after its saga began, so it is never older
 *       than its saga: when the participants' retention is at least the coordinator's, every command the coordinator
 *       still sends finds its rows.</li>
 * </ul>
 *
 * <p>Not covered: a command parked in a dead-letter queue and re-driven by hand after the retention (its saga is past
 * the coordinator's horizon too, and a compensation that succeeds for a purged saga opens an {@code ANOMALY} ticket
 * on the coordinator's side); a participant configured with a shorter retention than the coordinator's.
 *
 * <p>Batches of steps, oldest first, each its own short transaction; a step is taken by locking its forward row with
 * {@code SKIP LOCKED}, so several instances may purge at once, each step by one of them. Thread-safe.
 */
public final class SagaBranchPurger {

  private static final Logger log = LoggerFactory.getLogger(SagaBranchPurger.class);

  /** The default steps per batch. */
  public static final int DEFAULT_BATCH_SIZE = 1_000;

  /** The steps whose youngest row is older than the retention (a step's rows: same participant, saga and step). */
  private static final String EXPIRED = """
      SELECT b.participant, b.saga_id, b.step FROM converge_saga_branch b
       WHERE b.created_at < now() - make_interval(secs => ?)
         AND NOT EXISTS (SELECT 1 FROM converge_saga_branch y
                          WHERE y.participant = b.participant AND y.saga_id = b.saga_id AND y.step = b.step
                            AND y.created_at >= now() - make_interval(secs => ?))""";
  /**
   * A batch locks the forward rows of its steps only (every step has one: a compensation that came first writes it
   * {@code PREVENTED}), then deletes all the rows of those steps: two purgers never pick the same step, so neither waits
   * for a sibling row the other locked (locking any row of a step let one purger take a step's forward row and the
   * other its compensation row, each then waiting for the other's: a deadlock).
   */
  private static final String PURGE = "WITH old AS (" + EXPIRED + """
         AND b.direction = 'forward'
       ORDER BY b.created_at LIMIT ? FOR UPDATE OF b SKIP LOCKED)
      DELETE FROM converge_saga_branch d USING old o
       WHERE d.participant = o.participant AND d.saga_id = o.saga_id AND d.step = o.step""";
  private static final String COUNT = "SELECT count(*) FROM (" + EXPIRED + ") e";

  private final DataSource dataSource;
  private final SagaBranchRetention retention;
  private final int batchSize;

  /**
   * A purger.
   *
   * @param batchSize rows read per batch (each with the rest of its step), 1..100000
   * @throws IllegalArgumentException naming the bad value
   */
  public SagaBranchPurger(DataSource dataSource, SagaBranchRetention retention, int batchSize) {
    this.retention = Require.present("converge.saga.branch-retention", retention);
    this.batchSize = Require.between("converge.saga.branch-purge-batch-size", batchSize, 1,
        BatchPurger.MAX_BATCH_SIZE);
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  /** The retention. */
  public SagaBranchRetention retention() {
    return retention;
  }

  /**
   * Deletes the rows of every step whose youngest row is older than the retention, batch by batch, stopping after
   * {@code maxBatches}.
   *
   * @return the number of rows deleted
   * @throws io.converge.core.DatabaseUnavailableException when the database is unreachable
   */
  public long purgeExpired(int maxBatches) {
    Require.between("saga.branch.purge.maxBatches", maxBatches, 1, Integer.MAX_VALUE);
    double secs = retention.retention().toSeconds();
    long total = BatchPurger.repeat(dataSource, "the saga participants' barrier rows", PURGE, maxBatches, ps -> {
      ps.setDouble(1, secs);
      ps.setDouble(2, secs);
      ps.setInt(3, batchSize);
    });
    if (total > 0) {
      log.info("Saga branch purge: {} rows of steps last written more than {} ago deleted", total,
          retention.retention());
    }
    return total;
  }

  /** How many rows {@link #purgeExpired} would read now (the old rows of steps with no younger row). */
  public long countExpired() {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(COUNT)) {
      double secs = retention.retention().toSeconds();
      ps.setDouble(1, secs);
      ps.setDouble(2, secs);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot count the saga participants' barrier rows to purge", null, e);
    }
  }
}
