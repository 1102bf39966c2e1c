package io.converge.producer.internal;

import io.converge.core.DatabaseRefusedException;
import io.converge.core.internal.DatabaseErrors;
import io.converge.core.internal.DayPartitions;
import io.converge.core.internal.PipelinedCommit;
import io.converge.core.LateCommitFencedException;
import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.BatchPurger.Cutoff;
import io.converge.producer.spi.CommitWrite;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transaction log, table {@code converge_txn_log}: the single source of truth of "did the local
 * transaction of this message commit?", shared by every backend and every instance of a producer
 * group. Partitioned by the day of the message id ({@link TxnLogStatements}, producer-txn README, "Partitions by day").
 * Thread-safe; stateless apart from its data source.
 */
public final class TxnLog {

  /**
   * The outcome of a message as the log knows it: {@code COMMITTED}, {@code ROLLED_BACK}, {@code UNKNOWN}
   * (no row yet: ask again), or {@code PAST_RETENTION}: no row for a message older than the log's
   * retention, whose row may have been purged after its unit committed; never guessed, answer the
   * broker UNKNOWN (a ticket is raised in {@code converge_txn_ticket}).
   */
  public enum Outcome {
    COMMITTED, ROLLED_BACK, UNKNOWN, PAST_RETENTION
  }

  /** The retention of a log built without one: the producer's default, 7 days. */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
  /** The days after today whose partitions are created ahead (today's too). */
  public static final int PARTITIONS_AHEAD = 3;

  private static final Logger LOG = LoggerFactory.getLogger(TxnLog.class);
  private static final String UNIQUE_VIOLATION = "23505";
  private static final String DIVISION_BY_ZERO = "22012";
  /** The day partitions: each has its own primary key (the parent has none, see producer migration V9). */
  private static final String PARENT = "converge_txn_log";
  private static final String PARTITION_KEY = "ALTER TABLE %s ADD PRIMARY KEY (message_id)";
  // in the connection's search path, as the statements find their tables
  private static final String TABLE_EXISTS = "SELECT to_regclass(?) IS NOT NULL";
  private static final String NOW = "SELECT now()";
  private final DataSource dataSource;
  private final Duration retention;
  private final CheckBack checkBack;

  /** The log on {@code dataSource} (whose schema has the producer migrations applied), {@link #DEFAULT_RETENTION}. */
  public TxnLog(DataSource dataSource) {
    this(dataSource, DEFAULT_RETENTION);
  }

  /**
   * The log on {@code dataSource} whose rows are kept {@code retention} (the producer's
   * {@code logRetention}): a check-back for an older message without a row is not fenced.
   */
  public TxnLog(DataSource dataSource, Duration retention) {
    this.dataSource = dataSource;
    this.retention = retention;
    this.checkBack = new CheckBack(retention);
  }

  /**
   * The day partitions of {@code converge_txn_log} in {@code dataSource}'s schema, owned by producer groups (for the
   * purge and a health check).
   */
  public static DayPartitions partitions(DataSource dataSource) {
    return DayPartitions.of(dataSource, PARENT, PARTITION_KEY, "created_at").ownedBy("producer_group");
  }

  /**
   * Records, inside the caller's transaction on {@code connection}, that message {@code id} commits
   * with it.
   *
   * @throws LateCommitFencedException when a check-back already fenced the id (answered ROLLBACK)
   * @throws SQLException on any other database error
   */
  public void recordCommitted(Connection connection, String id, String group, String topic) throws SQLException {
    recordCommitted(connection, id, null, group, topic);
  }

  /**
   * {@link #recordCommitted(Connection, String, String, String)} for attempt {@code attempt} of message
   * {@code id} (a token the broker message carries too, see {@link #resolve}); null: any attempt. A
   * fence that a check-back left for another attempt of the same id (a unit retried with the same id
   * after its first attempt died) is replaced by this attempt's row; that check-back has answered
   * ROLLBACK for its own attempt, and later check-backs of it still do (the row is of another attempt).
   * A fence of this attempt or of every attempt (null: rows from before attempts, or two fenced attempts)
   * refuses the commit.
   *
   * @throws LateCommitFencedException when a check-back already fenced this attempt, or the id is committed
   */
  public void recordCommitted(Connection connection, String id, String attempt, String group, String topic)
      throws SQLException {
    Map<String, String> values = TxnLogStatements.row(group, topic, attempt);
    try (PreparedStatement ps = TxnLogStatements.prepare(connection, TxnLogStatements.RECORD, id, values)) {
      if (ps.executeUpdate() == 1) {
        return;
      }
    } catch (SQLException e) {
      throw refusedOr(e, id);
    }
    try (PreparedStatement ps = TxnLogStatements.prepare(connection, TxnLogStatements.REPLACE_FENCE, id, values)) {
      if (ps.executeUpdate() == 0) {
        throw fenced(id, attempt, group);
      }
    }
  }

  /** {@code e}, or the typed refusal of a write the partitions' routing refused. */
  private static SQLException refusedOr(SQLException e, String id) {
    DatabaseRefusedException refused = TxnLogStatements.refused(e, id);
    if (refused != null) {
      throw refused;
    }
    return e;
  }

  /**
   * {@link #recordCommitted(Connection, String, String, String, String)} as the last write of a unit of
   * work, which may travel with its commit ({@link CommitWrite}).
   */
  public CommitWrite committedWrite(String id, String attempt, String group, String topic) {
    return new CommitWrite() {

      @Override
      public void write(Connection connection) throws SQLException {
        recordCommitted(connection, id, attempt, group, topic);
      }

      @Override
      public void writeAndCommit(Connection connection) throws SQLException {
        if (!PipelinedCommit.supported(connection)) {
          write(connection);
          connection.commit();
          return;
        }
        try (PreparedStatement ps = TxnLogStatements.prepare(connection,
            TxnLogStatements.RECORD_OR_FAIL_AND_COMMIT, TxnLogStatements.RECORD_OR_FAIL, id,
            TxnLogStatements.row(group, topic, attempt))) {
          ps.execute();
        } catch (SQLException e) {
          if (DIVISION_BY_ZERO.equals(e.getSQLState())) {
            throw fenced(id, attempt, group);
          }
          throw refusedOr(e, id);
        }
        PipelinedCommit.committed(connection);
      }
    };
  }

  private static LateCommitFencedException fenced(String id, String attempt, String group) {
    return new LateCommitFencedException("Message " + id + (attempt != null ? " attempt " + attempt : "")
        + " of group " + group
        + " was already resolved by a check-back (its local transaction took longer than the timeout) or committed;"
        + " the unit of work is rolled back", id, null);
  }

  /**
   * {@link #recordCommitted(Connection, String, String, String)} for several messages in one statement.
   *
   * @param ids the message ids
   * @param topics their topics, in the same order
   * @throws LateCommitFencedException when a check-back already fenced one of the ids
   */
  public void recordCommitted(Connection connection, java.util.List<String> ids, String group,
      java.util.List<String> topics)
      throws SQLException {
    if (ids.size() == 1) {
      recordCommitted(connection, ids.get(0), group, topics.get(0));
      return;
    }
    try (PreparedStatement ps = connection.prepareStatement(TxnLogStatements.RECORD_ALL)) {
      ps.setString(1, group);
      ps.setArray(2, connection.createArrayOf("text", ids.toArray()));
      ps.setArray(3, connection.createArrayOf("text", topics.toArray()));
      ps.setArray(4, connection.createArrayOf("text", TxnLogStatements.days(ids)));
      ps.executeUpdate();
    } catch (SQLException e) {
      throw fencedAll(refusedOr(e, ids.get(0)), ids, group);
    }
  }

  /**
   * The statement of {@link #recordCommitted(Connection, java.util.List, String, java.util.List)} (for
   * more than one id or for ids without attempts), for a backend that sends it in a statement list of
   * its own ({@link PipelinedCommit}). Parameters: the group, the ids ({@code text[]}), their topics
   * ({@code text[]}) and their days ({@code text[]}, {@link #days}). An id already in the log fails it with a unique
   * violation: see {@link #fencedAll}.
   */
  public static String recordAllStatement() {
    return TxnLogStatements.RECORD_ALL;
  }

  /** The days of {@code ids} for {@link #recordAllStatement()}: the partition each is routed to, if it exists. */
  public static String[] days(java.util.List<String> ids) {
    return TxnLogStatements.days(ids);
  }

  /**
   * What a failure {@code e} of {@link #recordAllStatement()} means: a {@link LateCommitFencedException}
   * when an id of {@code ids} was already in the log (fenced by a check-back, or committed), else {@code e}.
   */
  public static SQLException fencedAll(SQLException e, java.util.List<String> ids, String group) {
    if (UNIQUE_VIOLATION.equals(e.getSQLState()) && String.valueOf(e.getMessage()).contains("converge_txn_log")) {
      throw new LateCommitFencedException("A message of " + ids + " of group " + group
          + " was already resolved by a check-back (its local transaction took longer than the timeout);"
          + " the unit of work is rolled back", ids.get(0), e);
    }
    return e;
  }

  /**
   * Answers a check-back for message {@code id}: COMMITTED when its row says so; when there is no
   * row, UNKNOWN while the message is younger than {@code timeout}; PAST_RETENTION when it is older
   * than the retention (its row may have been purged: a ticket is raised, nothing is fenced); else a
   * ROLLED_BACK fence is inserted (a concurrent local commit waits for it or it for the commit, and
   * exactly one wins) and the outcome that won is returned. Never throws: a database error answers
   * UNKNOWN (the broker asks again). When both the row and the check-back name an attempt and they
   * differ, the message is a stale attempt of a unit retried with the same id: ROLLED_BACK. A fence
   * records the attempt it fenced: a commit of another attempt of the id replaces it (see
   * {@link #recordCommitted(Connection, String, String, String, String)}); a fence of another attempt
   * counts as no row for this one (UNKNOWN while young, else the fence is widened to every attempt of
   * the id, so both stay fenced).
   *
   * @param attempt the attempt token the checked message carries, or null (matches any row of {@code id})
   * @param age how long ago the message was prepared
   */
  public Outcome resolve(String id, String attempt, String group, String topic, Duration age, Duration timeout) {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        Outcome outcome = checkBack.resolve(c, id, attempt, group, topic, age, timeout);
        c.commit();
        return outcome;
      } finally {
        rollbackQuietly(c); // no-op after the commit; ends a failed transaction
        c.setAutoCommit(autoCommit);
      }
    } catch (SQLException e) {
      LOG.warn("Check-back of message {} could not read the transaction log ({}); answering UNKNOWN", id, e.toString());
      return Outcome.UNKNOWN;
    }
  }

  private static void rollbackQuietly(Connection c) {
    try {
      c.rollback();
    } catch (SQLException e) {
      LOG.debug("Rollback of a check-back transaction failed: {}", e.toString());
    }
  }

  /** How long rows are kept. */
  public Duration retention() {
    return retention;
  }

  /** The outcome recorded for {@code id}, or UNKNOWN when there is no row. */
  public Outcome outcome(String id) {
    try (Connection c = dataSource.getConnection()) {
      return CheckBack.outcomeFor(CheckBack.read(c, id), id, null);
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot read the transaction log for message " + id, id, e);
    }
  }

  /**
   * Keeps the rows of producer group {@code group} for the retention (producer-txn README, "Partitions by day"):
   * creates the day partitions of today and the next {@link #PARTITIONS_AHEAD} days that are missing, drops whole the
   * day partitions (before the cutoff's day) whose rows are all this group's and whose newest row is older than the
   * retention, then deletes this group's rows older than the retention in the catch-all and in the partitions of those
   * days that other groups share (their retention may be longer: their rows are theirs to purge), in batches of
   * {@code batchSize} rows, each batch its own short transaction (no long lock, no DELETE storm). The rows of the
   * partitions from the cutoff's day on wait for their partition to expire whole (at most a day past the retention).
   * Also deletes the group's records of ENDs that did not arrive, {@code converge_txn_end}, when migration V5 that
   * creates that table is applied (a schema without it is purged of what it has). A partition whose lock is not had
   * within {@link DayPartitions#DEFAULT_LOCK_TIMEOUT} is left to the next run (logged).
   *
   * @return the number of rows deleted one by one (not those of the partitions dropped)
   */
  public long purge(String group, int batchSize) {
    Instant now = databaseNow(); // the clock that wrote the rows, one for every instance
    DayPartitions partitions = partitions(dataSource);
    partitions.createAhead(LocalDate.ofInstant(now, ZoneOffset.UTC), PARTITIONS_AHEAD + 1);
    Instant before = now.minus(retention);
    LocalDate cutoffDay = LocalDate.ofInstant(before, ZoneOffset.UTC);
    partitions.dropExpired(cutoffDay, before, group);
    long log = BatchPurger.of(dataSource, "converge_txn_log", "created_at").keyedBy("message_id").oldestFirst()
        .where("producer_group = ? AND day < CAST(? AS date)")
        .purge("the transaction log of group " + group, Cutoff.before(before), batchSize, Long.MAX_VALUE, n -> {
        }, group, cutoffDay.toString());
    if (!tableExists("converge_txn_end")) {
      LOG.debug("No converge_txn_end (producer migration V5 not applied): purged the transaction log only");
      return log;
    }
    // the records of ENDs that did not arrive (RocketMQ), kept as long as the log; one row per attempt (V6)
    return log + BatchPurger.of(dataSource, "converge_txn_end", "created_at").oldestFirst()
        .where("producer_group = ?")
        .purge("the END records of group " + group, Cutoff.olderThan(retention), batchSize, Long.MAX_VALUE, n -> {
        }, group);
  }

  private Instant databaseNow() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(NOW);
        java.sql.ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getTimestamp(1).toInstant();
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot purge the transaction log: the database's time could not be read", null,
          e);
    }
  }

  private boolean tableExists(String table) {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(TABLE_EXISTS)) {
      ps.setString(1, table);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Cannot purge the END records: the schema could not be read", null, e);
    }
  }
}
