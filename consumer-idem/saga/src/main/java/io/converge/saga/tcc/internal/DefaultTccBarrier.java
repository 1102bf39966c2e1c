package io.converge.saga.tcc.internal;

import io.converge.core.internal.DatabaseErrors;
import io.converge.saga.tcc.CancelAfterConfirmException;
import io.converge.saga.tcc.ConfirmAfterCancelException;
import io.converge.saga.tcc.ConfirmWithoutTryException;
import io.converge.saga.tcc.TccBarrier;
import io.converge.saga.tcc.TccBody;
import io.converge.saga.tcc.TccCall;
import io.converge.saga.tcc.TccIsolationException;
import io.converge.saga.tcc.TccMetrics;
import io.converge.saga.tcc.TccOperation;
import io.converge.saga.tcc.TccOutcome;
import io.converge.saga.tcc.TccResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The barrier on {@code converge_tcc_barrier}: an insert first, and a row read or updated only once the insert found
 * it taken (the insert waited for the transaction that took it, so it is committed and visible to the next statement
 * in READ COMMITTED). Thread-safe: no state but the metrics.
 */
public final class DefaultTccBarrier implements TccBarrier {

  private static final Logger log = LoggerFactory.getLogger(DefaultTccBarrier.class);

  private static final String INSERT = """
      INSERT INTO converge_tcc_barrier (tenant, global_id, branch_id, operation, origin, outcome, result)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT DO NOTHING""";
  private static final String READ = """
      SELECT origin, result FROM converge_tcc_barrier
       WHERE tenant = ? AND global_id = ? AND branch_id = ? AND operation = ?""";
  /**
   * The branch's Confirm and Cancel serialize on its try row (it exists for both when they get here). The isolation
   * level comes with it: the lookup after the lock needs a new snapshot, which REPEATABLE READ does not take.
   */
  private static final String LOCK_TRY = """
      SELECT origin, current_setting('transaction_isolation') FROM converge_tcc_barrier
       WHERE tenant = ? AND global_id = ? AND branch_id = ? AND operation = 'try' FOR UPDATE""";
  /**
   * A Confirm's three statements (its row inserted, the try row locked, the Cancel's row looked up) sent in one round
   * trip: the driver sends them one after the other before a single sync, and the server runs each as its own
   * statement, in order, each with its own snapshot (READ COMMITTED), exactly as three round trips would: the lookup
   * starts after the lock was granted, so it sees a Cancel that committed while the lock was waited for.
   */
  private static final String CONFIRM_GATE = INSERT + ";\n" + LOCK_TRY + ";\n" + READ;
  private static final String SET_RESULT = """
      UPDATE converge_tcc_barrier SET outcome = ?, result = ?
       WHERE tenant = ? AND global_id = ? AND branch_id = ? AND operation = ?""";
  private static final String REFUSED = """
      UPDATE converge_tcc_barrier SET refusals = refusals + 1, refused_at = now()
       WHERE tenant = ? AND global_id = ? AND branch_id = ? AND operation = ? AND origin = 'cancel-first'""";

  /**
   * The fast path's round trip: the driver sends both statements before one sync; the server skips the COMMIT when
   * the function raises, and the transaction is then failed and rolled back by the caller of this statement.
   */
  private static final String FAST_COMMIT = "SELECT converge_tcc_barrier_commit(?, ?, ?, ?, ?);\nCOMMIT";
  /** The SQLSTATE of {@code converge_tcc_barrier_commit} when the slow path would not answer RAN (V3). */
  static final String NOT_RAN = "CVT01";

  static final String ORIGIN_TRY = "try";
  static final String ORIGIN_CANCEL_FIRST = "cancel-first";
  /** The outcome column of a Try's row written by its Cancel: it fences the Try out. */
  static final String FENCED = "FENCED";
  private static final String RAN = TccOutcome.RAN.name();
  private static final byte[] NONE = new byte[0];

  private final TccMetrics metrics;

  /** A barrier counting on {@code metrics}. */
  public DefaultTccBarrier(TccMetrics metrics) {
    this.metrics = metrics;
  }

  private record Row(String origin, byte[] result) {
  }

  @Override
  public TccResult run(Connection c, TccCall call, TccBody body) throws Exception {
    TccResult r = switch (call.operation()) {
      case TRY -> tryBranch(c, call, body);
      case CONFIRM -> confirm(c, call, body);
      case CANCEL -> cancel(c, call, body);
    };
    metrics.called(call.operation(), r.outcome());
    log.debug("TCC barrier: {} -> {}", call, r.outcome());
    return r;
  }

  /**
   * The body, then {@link #FAST_COMMIT} (the barrier's check-and-insert with the body's result, and the COMMIT) in one
   * round trip. Any failure of that transaction (the barrier's refusal {@link #NOT_RAN}, the body's exception, a
   * deadlock) rolls it back whole and asks {@link #run} in a new transaction, so the answer is the slow path's.
   */
  @Override
  public TccResult runAndCommit(Connection c, TccCall call, TccBody body) throws Exception {
    if (c.getAutoCommit()) {
      throw new IllegalArgumentException("TccBarrier.runAndCommit owns the commit: the connection's autocommit must "
          + "be off, but was on (the " + call + ")");
    }
    // a Cancel's body must see a Try still in progress once it committed: its barrier row first, as run does
    byte[] out = call.operation() == TccOperation.CANCEL ? null : fast(c, call, body);
    if (out != null) {
      metrics.called(call.operation(), TccOutcome.RAN);
      log.debug("TCC barrier: {} -> RAN, committed", call);
      return new TccResult(TccOutcome.RAN, out);
    }
    try {
      TccResult r = run(c, call, body);
      c.commit();
      return r;
    } catch (Exception | Error e) {
      rollback(c, e);
      throw e;
    }
  }

  /**
   * The body's result once committed with the barrier's row; null when rolled back (the slow path decides).
   *
   * @throws Exception a lost connection's: the COMMIT may have run (outcome unknown)
   */
  private static byte[] fast(Connection c, TccCall call, TccBody body) throws Exception {
    try {
      byte[] out = body.run(c);
      out = out == null ? NONE : out;
      try (PreparedStatement ps = c.prepareStatement(FAST_COMMIT)) {
        bindKey(ps, 1, call);
        ps.setBytes(5, out);
        ps.execute();
      }
      return out;
    } catch (Exception e) {
      if (connectionLost(c, e)) {
        log.warn("TCC barrier: {} lost its connection on the fast path; the commit's outcome is unknown", call);
        throw e;
      }
      rollback(c, e);
      if (NOT_RAN.equals(e instanceof SQLException s ? s.getSQLState() : null)) {
        log.debug("TCC barrier: {} not RAN on the fast path ({}); asking the slow path", call, e.getMessage());
      } else {
        log.debug("TCC barrier: {} failed on the fast path; asking the slow path", call, e);
      }
      return null;
    } catch (Error e) {
      rollback(c, e);
      throw e;
    }
  }

  /** Whether {@code e} lost the connection ({@link DatabaseErrors#isOutage}), or left it closed. */
  private static boolean connectionLost(Connection c, Exception e) {
    if (DatabaseErrors.isOutage(e)) {
      return true;
    }
    try {
      return e instanceof SQLException && c.isClosed();
    } catch (SQLException closedCheck) {
      return true;
    }
  }

  private static void rollback(Connection c, Throwable cause) {
    try {
      c.rollback();
    } catch (SQLException rollbackFailed) {
      cause.addSuppressed(rollbackFailed);
    }
  }

  private TccResult tryBranch(Connection c, TccCall call, TccBody body) throws Exception {
    if (insert(c, call, ORIGIN_TRY, RAN)) {
      return ran(c, call, body);
    }
    Row row = read(c, call);
    if (ORIGIN_CANCEL_FIRST.equals(row.origin())) {
      update(c, REFUSED, call, 1);
      metrics.hanging(call.tenant());
      log.warn("TCC barrier refused a hanging Try: global {} branch {} (tenant {}) was cancelled before its Try "
          + "arrived; the Try's body did not run", call.globalId(), call.branchId(), call.tenant());
      return new TccResult(TccOutcome.HANGING_REFUSED, NONE);
    }
    return new TccResult(TccOutcome.DUPLICATE, row.result());
  }

  private record ConfirmGate(boolean inserted, String tried, boolean cancelled) {
  }

  /** The try row's origin (null: no row) and the transaction's isolation level, read with its lock. */
  private record TryLock(String origin, String isolation) {
  }

  /** REPEATABLE READ: the lookup after the try row's lock would not see a racing Confirm or Cancel that committed. */
  private static void refuseRepeatableRead(TccCall call, TryLock lock) {
    if ("repeatable read".equals(lock.isolation())) {
      log.error("TCC barrier refused the {}: its transaction is REPEATABLE READ, where a racing Confirm and Cancel"
          + " could both run; use READ COMMITTED or SERIALIZABLE", call);
      throw new TccIsolationException(call, lock.isolation());
    }
  }

  private TccResult confirm(Connection c, TccCall call, TccBody body) throws Exception {
    ConfirmGate gate = confirmGate(c, call);
    if (!gate.inserted()) {
      return new TccResult(TccOutcome.DUPLICATE, read(c, call).result());
    }
    // the Try committed before the coordinator sent this Confirm, or it never ran here: its row is locked, so that a
    // racing Cancel waits for this Confirm's end, then sees its row (and the reverse)
    String tried = gate.tried();
    if (tried == null || !ORIGIN_TRY.equals(tried)) {
      throw new ConfirmWithoutTryException(call, tried == null ? "no Try row" : "the Try was refused as hanging");
    }
    if (gate.cancelled()) {
      log.error("TCC barrier refused a Confirm after the Cancel of global {} branch {} (tenant {}): the confirm body "
          + "did not run", call.globalId(), call.branchId(), call.tenant());
      throw new ConfirmAfterCancelException(call);
    }
    return ran(c, call, body);
  }

  private TccResult cancel(Connection c, TccCall call, TccBody body) throws Exception {
    // the barrier: the Try's row inserted now means the Try never ran here, and never will
    boolean empty = insert(c, call.with(TccOperation.TRY), ORIGIN_CANCEL_FIRST, FENCED);
    if (!insert(c, call, TccOperation.CANCEL.wireName(), empty ? TccOutcome.EMPTY_ROLLBACK.name() : RAN)) {
      return new TccResult(TccOutcome.DUPLICATE, read(c, call).result());
    }
    if (empty) {
      log.debug("TCC barrier: {} is an empty rollback (its Try never ran)", call);
      return new TccResult(TccOutcome.EMPTY_ROLLBACK, NONE);
    }
    // the Try's row exists (the insert above found it taken): locked, so that a racing Confirm waits for this
    // Cancel's end, then sees its row (and the reverse); the next statement reads what committed meanwhile
    lockTry(c, call);
    if (find(c, call.with(TccOperation.CONFIRM)) != null) {
      log.error("TCC barrier refused a Cancel after the Confirm of global {} branch {} (tenant {}): the cancel body "
          + "did not run", call.globalId(), call.branchId(), call.tenant());
      throw new CancelAfterConfirmException(call);
    }
    return ran(c, call, body);
  }

  private TccResult ran(Connection c, TccCall call, TccBody body) throws Exception {
    byte[] out = body.run(c);
    out = out == null ? NONE : out;
    if (out.length > 0) {
      try (PreparedStatement ps = c.prepareStatement(SET_RESULT)) {
        ps.setString(1, RAN);
        ps.setBytes(2, out);
        bindKey(ps, 3, call);
        ps.executeUpdate();
      }
    }
    return new TccResult(TccOutcome.RAN, out);
  }

  private static boolean insert(Connection c, TccCall call, String origin, String outcome) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INSERT)) {
      int i = bindKey(ps, 1, call);
      ps.setString(i, origin);
      ps.setString(i + 1, outcome);
      ps.setBytes(i + 2, NONE);
      return ps.executeUpdate() == 1;
    }
  }

  /** {@link #CONFIRM_GATE}: the Confirm's insert, the try row's lock, the Cancel's row, in one round trip. */
  private static ConfirmGate confirmGate(Connection c, TccCall call) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CONFIRM_GATE)) {
      int i = bindKey(ps, 1, call);
      ps.setString(i, TccOperation.CONFIRM.wireName());
      ps.setString(i + 1, RAN);
      ps.setBytes(i + 2, NONE);
      ps.setString(i + 3, call.tenant());
      ps.setString(i + 4, call.globalId());
      ps.setString(i + 5, call.branchId());
      bindKey(ps, i + 6, call.with(TccOperation.CANCEL));
      boolean resultSet = ps.execute();
      if (resultSet) {
        throw new SQLException("converge_tcc_barrier: the Confirm's insert returned rows");
      }
      boolean inserted = ps.getUpdateCount() == 1;
      TryLock lock = ps.getMoreResults() ? tryLock(ps.getResultSet()) : new TryLock(null, null);
      boolean cancelled = ps.getMoreResults() && first(ps.getResultSet()) != null;
      if (inserted) {
        refuseRepeatableRead(call, lock);
      }
      return new ConfirmGate(inserted, lock.origin(), cancelled);
    }
  }

  private static String first(ResultSet rs) throws SQLException {
    try (rs) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  private static Row read(Connection c, TccCall call) throws SQLException {
    Row row = find(c, call);
    if (row == null) {
      // the insert found it taken and committed: only a purge between the two statements removes it
      throw new SQLException("converge_tcc_barrier: the row of the " + call + " was taken, then gone (purged?)",
          "40001");
    }
    return row;
  }

  private static void lockTry(Connection c, TccCall call) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LOCK_TRY)) {
      ps.setString(1, call.tenant());
      ps.setString(2, call.globalId());
      ps.setString(3, call.branchId());
      refuseRepeatableRead(call, tryLock(ps.executeQuery()));
    }
  }

  private static TryLock tryLock(ResultSet rs) throws SQLException {
    try (rs) {
      return rs.next() ? new TryLock(rs.getString(1), rs.getString(2)) : new TryLock(null, null);
    }
  }

  private static Row find(Connection c, TccCall call) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(READ)) {
      bindKey(ps, 1, call);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Row(rs.getString(1), rs.getBytes(2)) : null;
      }
    }
  }

  private static void update(Connection c, String sql, TccCall call, int from) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bindKey(ps, from, call);
      ps.executeUpdate();
    }
  }

  private static int bindKey(PreparedStatement ps, int from, TccCall call) throws SQLException {
    ps.setString(from, call.tenant());
    ps.setString(from + 1, call.globalId());
    ps.setString(from + 2, call.branchId());
    ps.setString(from + 3, call.operation().wireName());
    return from + 4;
  }
}
