package io.converge.producer.internal;

import io.converge.producer.internal.TxnLog.Outcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The check-back decision of {@link TxnLog}: reads the row of a message and, when there is none
 * past the timeout, fences it (or raises a ticket past the retention). Runs inside a transaction the
 * caller opened and ends. Thread-safe; stateless apart from the retention.
 */
final class CheckBack {

  private static final Logger LOG = LoggerFactory.getLogger(TxnLog.class);
  /** Rounds of read-then-write in one check-back; a row changes at most twice. */
  private static final int MAX_ROUNDS = 4;

  private static final String TICKET = """
      INSERT INTO converge_txn_ticket (message_id, producer_group, topic, kind, reason)
      VALUES (?, ?, ?, 'CHECK_BACK_PAST_RETENTION', ?)
      ON CONFLICT (message_id) DO UPDATE SET checks = converge_txn_ticket.checks + 1, last_check_at = now()
      """;
  private static final String LOCK_TIMEOUT = "SET LOCAL lock_timeout = '2s'";
  private final Duration retention;

  CheckBack(Duration retention) {
    this.retention = retention;
  }

  /** Decides a check-back inside the transaction on {@code c} (see {@link TxnLog#resolve}). */
  Outcome resolve(Connection c, String id, String attempt, String group, String topic, Duration age, Duration timeout)
      throws SQLException {
    try (Statement s = c.createStatement()) {
      // never wait long on a local transaction that holds the id (the broker asks again); LOCAL: the
      // setting ends with this transaction and never reaches the application's next use of the connection
      s.execute(LOCK_TIMEOUT);
    }
    // a row only moves forward (none -> fence -> committed / fence of every attempt): a write that lost
    // a race reads the row again and decides on what won
    for (int round = 0; round < MAX_ROUNDS; round++) {
      Row row = read(c, id);
      if (row != null && !row.fencesAnotherAttemptThan(attempt)) {
        return outcomeFor(row, id, attempt);
      }
      // no row, or a fence of another attempt, which says nothing about this one
      if (age.compareTo(timeout) < 0) {
        return Outcome.UNKNOWN;
      }
      Outcome won = row == null ? fence(c, id, attempt, group, topic, age)
          : widenFence(c, id, attempt, row.attempt(), group, age);
      if (won != null) {
        return won;
      }
    }
    LOG.warn("Check-back of message {} attempt {}: its log row kept changing; answering UNKNOWN", id, attempt);
    return Outcome.UNKNOWN;
  }

  /**
   * Inserts the fence of {@code attempt} unless a row exists (null: lost to another row); past the
   * retention raises a ticket instead (PAST_RETENTION).
   */
  private Outcome fence(Connection c, String id, String attempt, String group, String topic, Duration age)
      throws SQLException {
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
    try (PreparedStatement ps = TxnLogStatements.prepare(c, TxnLogStatements.FENCE, id,
        TxnLogStatements.row(group, topic, attempt))) {
      if (ps.executeUpdate() == 1) {
        LOG.warn(
            "Message {} of group {} had no committed local transaction {} after it was prepared: fenced and rolled back",
            id, group, age);
        return Outcome.ROLLED_BACK;
      }
      return null;
    }
  }

  /**
   * Widens the fence of attempt {@code fenced} to every attempt of the id, so {@code attempt} is fenced
   * too and the first stays fenced (null: the row changed meanwhile).
   */
  private static Outcome widenFence(Connection c, String id, String attempt, String fenced, String group, Duration age)
      throws SQLException {
    try (PreparedStatement ps = TxnLogStatements.prepare(c, TxnLogStatements.WIDEN_FENCE, id,
        Map.of("fenced", fenced))) {
      if (ps.executeUpdate() == 1) {
        LOG.warn(
            "Message {} attempt {} of group {} had no committed local transaction {} after it was prepared; attempt {}"
                + " of the id was fenced before: every attempt of the id is fenced and rolled back",
            id, attempt, group, age, fenced);
        return Outcome.ROLLED_BACK;
      }
      return null;
    }
  }

  /** The row of {@code id}, or null. */
  static Row read(Connection c, String id) throws SQLException {
    try (PreparedStatement ps = TxnLogStatements.prepare(c, TxnLogStatements.OUTCOME, id, Map.of())) {
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Row(Outcome.valueOf(rs.getString(1)), rs.getString(2)) : null;
      }
    }
  }

  /**
   * What {@code row} answers for attempt {@code attempt}: UNKNOWN without a row; a COMMITTED row of
   * another attempt is ROLLED_BACK for it. A fence of another attempt is handled by the caller.
   */
  static Outcome outcomeFor(Row row, String id, String attempt) {
    if (row == null) {
      return Outcome.UNKNOWN;
    }
    if (row.outcome() == Outcome.COMMITTED && row.ofAnotherAttemptThan(attempt)) {
      LOG.info("Check-back of message {} attempt {}: the committed row is attempt {}; the stale attempt is rolled back",
          id, attempt, row.attempt());
      return Outcome.ROLLED_BACK;
    }
    return row.outcome();
  }

  /** A log row: its outcome and attempt (null: every attempt of the id). */
  record Row(Outcome outcome, String attempt) {

    boolean ofAnotherAttemptThan(String other) {
      return attempt != null && other != null && !attempt.equals(other);
    }

    boolean fencesAnotherAttemptThan(String other) {
      return outcome == Outcome.ROLLED_BACK && ofAnotherAttemptThan(other);
    }
  }
}
