package io.converge.producer.spi;

import io.converge.producer.DatabaseUnavailableException;
import io.converge.producer.LateCommitFencedException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transaction log, table {@code converge_txn_log}: the single source of truth of "did the local
 * transaction of this message commit?", shared by every backend and every instance of a producer
 * group. Thread-safe; stateless apart from its data source.
 */
public final class TxnLog {

  /**
   * The outcome of a message as the log knows it: {@code COMMITTED}, {@code ROLLED_BACK}, {@code UNKNOWN}
   * (no row yet: ask again), or {@code PAST_RETENTION}: no row for a message older than the log's
   * retention, whose row may have been purged after its unit committed; never guessed, answer the
   * broker UNKNOWN (a ticket is raised in {@code converge_txn_ticket}).
   */
  public enum Outcome { COMMITTED, ROLLED_BACK, UNKNOWN, PAST_RETENTION }

  /** The retention of a log built without one: the producer's default, 7 days. */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);

  private static final Logger LOG = LoggerFactory.getLogger(TxnLog.class);
  private static final String UNIQUE_VIOLATION = "23505";

  private static final String RECORD = """
      INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, attempt)
      VALUES (?, ?, ?, 'COMMITTED', ?)
      """;
  private static final String RECORD_ALL = """
      INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome)
      SELECT id, ?, topic, 'COMMITTED' FROM unnest(?::text[], ?::text[]) AS m(id, topic)
      """;
  private static final String FENCE = """
      INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, attempt)
      VALUES (?, ?, ?, 'ROLLED_BACK', ?)
      ON CONFLICT (message_id) DO NOTHING
      """;
  private static final String OUTCOME = "SELECT outcome, attempt FROM converge_txn_log WHERE message_id = ?";
  private static final String TICKET = """
      INSERT INTO converge_txn_ticket (message_id, producer_group, topic, kind, reason)
      VALUES (?, ?, ?, 'CHECK_BACK_PAST_RETENTION', ?)
      ON CONFLICT (message_id) DO UPDATE SET checks = converge_txn_ticket.checks + 1, last_check_at = now()
      """;
  private static final String LOCK_TIMEOUT = "SET LOCAL lock_timeout = '2s'";
  private static final String PURGE = """
      DELETE FROM converge_txn_log WHERE message_id IN (
        SELECT message_id FROM converge_txn_log
        WHERE producer_group = ? AND created_at < now() - make_interval(secs => ?)
        ORDER BY created_at
        LIMIT ?)
      """;

  private final DataSource dataSource;
  private final Duration retention;

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
   * {@code id} (a token the broker message carries too, see {@link #resolve}); null: any attempt.
   */
  public void recordCommitted(Connection connection, String id, String attempt, String group, String topic) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(RECORD)) {
      ps.setString(1, id);
      ps.setString(2, group);
      ps.setString(3, topic);
      ps.setString(4, attempt);
      ps.executeUpdate();
    } catch (SQLException e) {
      if (UNIQUE_VIOLATION.equals(e.getSQLState())) {
        throw new LateCommitFencedException("Message " + id + " of group " + group
            + " was already resolved by a check-back (its local transaction took longer than the timeout);"
            + " the unit of work is rolled back", id, e);
      }
      throw e;
    }
  }

  /**
   * {@link #recordCommitted(Connection, String, String, String)} for several messages in one statement.
   *
   * @param ids the message ids
   * @param topics their topics, in the same order
   * @throws LateCommitFencedException when a check-back already fenced one of the ids
   */
  public void recordCommitted(Connection connection, java.util.List<String> ids, String group, java.util.List<String> topics)
      throws SQLException {
    if (ids.size() == 1) {
      recordCommitted(connection, ids.get(0), group, topics.get(0));
      return;
    }
    try (PreparedStatement ps = connection.prepareStatement(RECORD_ALL)) {
      ps.setString(1, group);
      ps.setArray(2, connection.createArrayOf("text", ids.toArray()));
      ps.setArray(3, connection.createArrayOf("text", topics.toArray()));
      ps.executeUpdate();
    } catch (SQLException e) {
      if (UNIQUE_VIOLATION.equals(e.getSQLState())) {
        throw new LateCommitFencedException("A message of " + ids + " of group " + group
            + " was already resolved by a check-back (its local transaction took longer than the timeout);"
            + " the unit of work is rolled back", ids.get(0), e);
      }
      throw e;
    }
  }

  /**
   * Answers a check-back for message {@code id}: COMMITTED when its row says so; when there is no
   * row, UNKNOWN while the message is younger than {@code timeout}; PAST_RETENTION when it is older
   * than the retention (its row may have been purged: a ticket is raised, nothing is fenced); else a
   * ROLLED_BACK fence is inserted (a concurrent local commit waits for it or it for the commit, and
   * exactly one wins) and the outcome that won is returned. Never throws: a database error answers
   * UNKNOWN (the broker asks again). When both the row and the check-back name an attempt and they
   * differ, the message is a stale attempt of a unit retried with the same id: ROLLED_BACK.
   *
   * @param attempt the attempt token the checked message carries, or null (matches any row of {@code id})
   * @param age how long ago the message was prepared
   */
  public Outcome resolve(String id, String attempt, String group, String topic, Duration age, Duration timeout) {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        Outcome outcome = resolve(c, id, attempt, group, topic, age, timeout);
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

  private Outcome resolve(Connection c, String id, String attempt, String group, String topic, Duration age, Duration timeout)
      throws SQLException {
    try (Statement s = c.createStatement()) {
      // never wait long on a local transaction that holds the id (the broker asks again); LOCAL: the
      // setting ends with this transaction and never reaches the application's next use of the connection
      s.execute(LOCK_TIMEOUT);
    }
    Outcome known = read(c, id, attempt);
    if (known != Outcome.UNKNOWN || age.compareTo(timeout) < 0) {
      return known;
    }
    if (age.compareTo(retention) >= 0) {
      try (PreparedStatement ps = c.prepareStatement(TICKET)) {
        ps.setString(1, id);
        ps.setString(2, group);
        ps.setString(3, topic);
        ps.setString(4, "check-back for a message prepared " + age + " ago, older than the log retention " + retention
            + ", found no row: it may have committed and been purged; deliver or discard it by hand");
        ps.executeUpdate();
      }
      LOG.error("Check-back of message {} of group {} (prepared {} ago) is past the log retention {} and has no row:"
          + " answered UNKNOWN, ticket raised in converge_txn_ticket", id, group, age, retention);
      return Outcome.PAST_RETENTION;
    }
    try (PreparedStatement ps = c.prepareStatement(FENCE)) {
      ps.setString(1, id);
      ps.setString(2, group);
      ps.setString(3, topic);
      ps.setString(4, attempt);
      if (ps.executeUpdate() == 1) {
        LOG.warn("Message {} of group {} had no committed local transaction {} after it was prepared: fenced and rolled back",
            id, group, age);
        return Outcome.ROLLED_BACK;
      }
    }
    return read(c, id, attempt);
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
      return read(c, id, null);
    } catch (SQLException e) {
      throw new DatabaseUnavailableException("Cannot read the transaction log for message " + id, id, e);
    }
  }

  /**
   * Deletes the rows of producer group {@code group} older than the retention, in batches of
   * {@code batchSize} rows, each batch its own short transaction (no long lock, no DELETE storm).
   * Other groups' rows are theirs to purge: their retention may be longer.
   *
   * @return the number of rows deleted
   */
  public long purge(String group, int batchSize) {
    long total = 0;
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      while (true) {
        int n;
        try (PreparedStatement ps = c.prepareStatement(PURGE)) {
          ps.setString(1, group);
          ps.setDouble(2, retention.toMillis() / 1000.0);
          ps.setInt(3, batchSize);
          n = ps.executeUpdate();
        }
        total += n;
        if (n < batchSize) {
          return total;
        }
      }
    } catch (SQLException e) {
      throw new DatabaseUnavailableException("Cannot purge the transaction log of group " + group + " after " + total + " rows", null, e);
    }
  }

  /** The outcome of {@code id}; a COMMITTED row of another attempt than {@code attempt} is ROLLED_BACK for it. */
  private static Outcome read(Connection c, String id, String attempt) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(OUTCOME)) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Outcome.UNKNOWN;
        }
        Outcome outcome = Outcome.valueOf(rs.getString(1));
        String rowAttempt = rs.getString(2);
        if (outcome == Outcome.COMMITTED && attempt != null && rowAttempt != null && !attempt.equals(rowAttempt)) {
          LOG.info("Check-back of message {} attempt {}: the committed row is attempt {}; the stale attempt is rolled back",
              id, attempt, rowAttempt);
          return Outcome.ROLLED_BACK;
        }
        return outcome;
      }
    }
  }
}
