package io.converge.saga.tcc;

import io.converge.core.internal.Require;
import io.converge.saga.tcc.internal.DefaultTccBarrier;
import java.sql.Connection;

/**
 * The participant's TCC branch barrier: makes each of Try, Confirm and Cancel of a branch take effect once, in the
 * participant's own transaction, whatever the order and number of the calls that arrive (issue 33). Usable from any
 * transport ({@link TccParticipant} for messages, {@code io.converge.saga.tcc.http.TccServlet} for HTTP, or a
 * direct call).
 *
 * <p>Table {@code converge_tcc_barrier} (apply {@code Migrations.apply(dataSource, "tcc")}), one row per (tenant,
 * global id, branch id, operation), written only with {@code INSERT ... ON CONFLICT DO NOTHING}; a row is read or
 * updated only after the insert found it taken, and the insert waits for the transaction that took it to end, so
 * the row read is committed. Never a locking read of a missing row.
 *
 * <ul>
 *   <li>Try inserts its row: inserted, the body runs ({@link TccOutcome#RAN}); taken by a Try,
 *       {@link TccOutcome#DUPLICATE} with the stored result; taken by a Cancel that came first,
 *       {@link TccOutcome#HANGING_REFUSED} (counted, logged, recorded on the row).</li>
 *   <li>Cancel first inserts the Try's row as {@code cancel-first}: inserted, the Try never ran, so this is an
 *       {@link TccOutcome#EMPTY_ROLLBACK} (the cancel body does not run, the outcome is recorded); then it inserts its
 *       own row: taken, {@link TccOutcome#DUPLICATE}; inserted after a real Try, the body runs.</li>
 *   <li>Confirm inserts its row: taken, {@link TccOutcome#DUPLICATE}; inserted, it checks that a real Try ran
 *       ({@link ConfirmWithoutTryException} otherwise) and runs the body.</li>
 * </ul>
 *
 * <p>In {@link #run} the caller owns the transaction: the barrier never commits, rolls back or closes the
 * connection. A body that throws propagates unchanged; the caller rolls back and the barrier rows go with it. Run it
 * in {@code READ COMMITTED} (PostgreSQL's default) or {@code SERIALIZABLE}: a Confirm or a Cancel in
 * {@code REPEATABLE READ} is refused with {@link TccIsolationException} before its body commits (there a racing
 * Confirm and Cancel could both run). Implementations are thread-safe.
 *
 * <p>{@link #runAndCommit} is the fast path for a caller whose transaction holds nothing but the operation: the body
 * first, then the barrier and the commit in one round trip (see there).
 */
public interface TccBarrier {

  /**
   * Runs {@code call} through the barrier on {@code connection}, inside the caller's transaction.
   *
   * @param body the operation's business work; run at most once per (tenant, global id, branch id, operation)
   * @return the outcome, never null
   * @throws ConfirmWithoutTryException for a Confirm whose Try did not run here
   * @throws Exception what {@code body} threw, or the database's {@link java.sql.SQLException}
   */
  TccResult run(Connection connection, TccCall call, TccBody body) throws Exception;

  /**
   * Runs {@code call} through the barrier on {@code connection} and commits: for a Try or a Confirm the fast path, two
   * round trips fewer than {@link #run} and a commit; a Cancel is always {@link #run} and a commit (its barrier row
   * first: it waits for a Try still in progress, whose writes its body must see to release them; on the fast path
   * its body would run before the Try committed, release nothing, and be answered RAN). The body runs first; then one round trip sends the barrier's
   * check-and-insert (the function {@code converge_tcc_barrier_commit}, migration {@code tcc} V3, which stores the
   * body's result on the row it inserts) and the {@code COMMIT}. When the barrier finds that {@link #run} would not
   * have answered {@link TccOutcome#RAN} (a duplicate, an empty rollback, a hanging Try, a Confirm without its Try
   * or after its Cancel, a Cancel after its Confirm), the function raises, the COMMIT is skipped and the whole
   * transaction, the body's writes included, rolls back. Then, and whenever the first transaction fails in any other
   * way (the body threw, a deadlock, a serialization failure), this method rolls it back and answers what
   * {@link #run} answers in a new transaction on the same connection, committed: the same outcome, result and
   * exception as {@link #run} followed by a commit, and the same metrics. On return the transaction is committed; on
   * an exception it is rolled back. The connection stays open, autocommit off.
   *
   * <p>The contract this asks of the caller and the body:
   * <ul>
   *   <li>{@code connection} has autocommit off and no uncommitted work: the body's writes are the transaction's
   *       only work (what the caller wrote before would be committed with a RAN call, rolled back with any other).
   *       Settings made with {@code SET LOCAL} do not survive the roll back: set them for the session, or in the
   *       body.</li>
   *   <li>The body is transactional only: no remote call, message sent outside the transaction, file or cache
   *       write, since it may run and then be rolled back (a refused call), and run twice (once here, once on the
   *       slow path, which runs it again when the barrier lets it run: a body that fails fails twice).</li>
   *   <li>Lock order: the body's business rows, then the barrier's rows (the operation's row; for Confirm and Cancel,
   *       then the branch's try row, as {@link #run}). Two copies of the same call, or a Try and its Cancel, both
   *       on this path, serialize on the first business row their bodies share; when they share none, the barrier
   *       rows are taken in {@link #run}'s order, so two fast calls never deadlock on them. A fast call and a
   *       {@link #run} of the same branch on another connection (this method's own fallback included) take the two
   *       in opposite orders and can deadlock: PostgreSQL detects it ({@code deadlock_timeout}, 1 s by default)
   *       and aborts one; a fast call aborted there falls back to the slow path itself, a slow one throws the
   *       {@link java.sql.SQLException} with SQLSTATE {@code 40P01}, which the caller retries as any deadlock.</li>
   *   <li>Try against its Cancel, Confirm against Cancel: the outcomes are {@link #run}'s (the function runs the
   *       same statements in the same order): a Cancel that commits first fences the Try out (its fast attempt
   *       rolls back, then HANGING_REFUSED), and of a Confirm and a Cancel only the first to commit runs.</li>
   *   <li>A connection lost during the call (an outage as {@code DatabaseErrors} classifies it, or the
   *       connection closed) is thrown as it came, never answered from the slow path: the COMMIT may have run, so
   *       the outcome is unknown; the caller calls again on a new connection, and the barrier answers
   *       {@link TccOutcome#DUPLICATE} with the stored result if it committed.</li>
   * </ul>
   *
   * @param connection PostgreSQL, autocommit off, no uncommitted work; not closed
   * @param body the operation's business work, transactional only; run at most once per (tenant, global id, branch
   *     id, operation) among the committed transactions
   * @return the outcome, never null
   * @throws IllegalArgumentException when the connection's autocommit is on
   * @throws ConfirmWithoutTryException as {@link #run}
   * @throws Exception as {@link #run}: what {@code body} threw on the slow path, or the database's
   *     {@link java.sql.SQLException} (a {@code 40P01} to retry included)
   */
  TccResult runAndCommit(Connection connection, TccCall call, TccBody body) throws Exception;

  /** A builder. */
  static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link TccBarrier}; not thread-safe; validated in {@link #build()}. */
  final class Builder {

    private TccMetrics metrics = TccMetrics.NONE;

    private Builder() {
    }

    /** Where to count the outcomes and the hanging Tries refused ({@code tcc.hanging}); default nothing. */
    public Builder metrics(TccMetrics metrics) {
      this.metrics = metrics;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws NullPointerException naming a missing setting
     */
    public TccBarrier build() {
      return new DefaultTccBarrier(Require.present("tcc.barrier.metrics", metrics));
    }
  }
}
