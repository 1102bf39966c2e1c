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
 * <p>The caller owns the transaction: the barrier never commits, rolls back or closes the connection. A body that
 * throws propagates unchanged; the caller rolls back and the barrier rows go with it. Run it in {@code READ
 * COMMITTED} (PostgreSQL's default): in {@code REPEATABLE READ} a call that meets a row committed after its snapshot
 * fails with a serialization error, which the caller retries. Implementations are thread-safe.
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
