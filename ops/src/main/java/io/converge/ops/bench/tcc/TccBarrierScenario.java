package io.converge.ops.bench.tcc;

import io.converge.core.Migrations;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.NamedScenario;
import io.converge.saga.tcc.TccBarrier;
import io.converge.saga.tcc.TccCall;
import io.converge.saga.tcc.TccOperation;
import io.converge.saga.tcc.TccOutcome;
import io.converge.saga.tcc.TccResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * {@code tcc-barrier} and its baseline {@code tcc-handler-plain}: what the participant's {@link TccBarrier} costs per
 * branch. One operation is one branch as a participant sees it: its Try (freeze one unit of the worker's account) in
 * one transaction, then its Confirm (debit the frozen unit) in another, each a one-row update committed on
 * PostgreSQL. {@code tcc-barrier} runs both through the real barrier (its rows inserted, Confirm's check that the Try
 * ran); {@code tcc-handler-plain} runs the same updates without it. Each worker thread has its own account row and
 * connection, so the threads contend for the database's commits, not for a row lock. Run them as a pair
 * ({@code tcc-barrier:tcc-handler-plain}) to get the ratio run by run. {@code tcc-barrier-commit} is the same handler
 * through the barrier's fast path ({@link TccBarrier#runAndCommit}: the update, then the barrier's row and the commit
 * in one round trip); run it as {@code tcc-barrier-commit:tcc-handler-plain}.
 */
public final class TccBarrierScenario extends NamedScenario {

  /** The barrier's scenario and its baseline. */
  public static final List<String> NAMES = List.of("tcc-barrier", "tcc-barrier-commit", "tcc-handler-plain");

  private static final String FREEZE = "UPDATE bench_tcc_account SET frozen = frozen + 1 WHERE id = ?";
  private static final String DEBIT = "UPDATE bench_tcc_account SET frozen = frozen - 1, balance = balance - 1 WHERE id = ?";

  /** Through the barrier ({@code run} or {@code runAndCommit}), or not. */
  private final boolean barrier;
  /** Through {@link TccBarrier#runAndCommit}. */
  private final boolean fast;
  private final AtomicLong ids = new AtomicLong();
  private final String run = Long.toString(System.nanoTime(), 36);
  private final TccBarrier tcc = TccBarrier.builder().build();
  private DataSource pool;

  private TccBarrierScenario(String name, boolean barrier, boolean fast) {
    super(name, "branch");
    this.barrier = barrier;
    this.fast = fast;
  }

  /** The scenario called {@code name}, one of {@link #NAMES}. */
  public static TccBarrierScenario named(String name) {
    if (!NAMES.contains(name)) {
      throw new IllegalArgumentException("TCC barrier scenario must be one of " + NAMES + ", but was " + name);
    }
    return new TccBarrierScenario(name, !name.equals("tcc-handler-plain"), name.equals("tcc-barrier-commit"));
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    pool = env.newPool("bench_tcc_barrier", threads + 2); // the migration takes two
    Migrations.apply(pool, "tcc");
    try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE bench_tcc_account (id int PRIMARY KEY, balance bigint NOT NULL, frozen bigint NOT NULL)");
      s.execute("INSERT INTO bench_tcc_account SELECT g, 1000000000, 0 FROM generate_series(0, " + (threads - 1)
          + ") g");
    }
  }

  @Override
  public int runOnce(int worker) throws Exception {
    String global = run + "-" + ids.incrementAndGet();
    call(worker, global, TccOperation.TRY, FREEZE);
    call(worker, global, TccOperation.CONFIRM, DEBIT);
    return 1;
  }

  private void call(int worker, String global, TccOperation op, String sql) throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try {
        if (barrier) {
          TccCall call = new TccCall("bench", global, "account", op);
          // the fast path commits itself (the connection's commit() after it sends nothing)
          TccResult r = fast ? tcc.runAndCommit(c, call, x -> update(x, sql, worker))
              : tcc.run(c, call, x -> update(x, sql, worker));
          if (r.outcome() != TccOutcome.RAN) {
            throw new IllegalStateException("the " + op + " of " + global + " did not run: " + r.outcome());
          }
          if (!fast) {
            c.commit();
          }
        } else {
          update(c, sql, worker);
          c.commit();
        }
      } catch (Exception | Error e) {
        c.rollback();
        throw e;
      }
    }
  }

  private static byte[] update(Connection c, String sql, int worker) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, worker);
      if (ps.executeUpdate() != 1) {
        throw new SQLException("bench_tcc_account has no row " + worker);
      }
    }
    return null;
  }

  /**
   * The rows of the barrier ({@code converge_tcc_barrier}) and the units debited from the accounts so far: a branch
   * through the barrier leaves two rows (its Try's and its Confirm's) and one unit debited, its baseline none and one.
   */
  public long[] barrierRowsAndDebited() throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SELECT (SELECT count(*) FROM converge_tcc_barrier),"
            + " (SELECT sum(1000000000 - balance) FROM bench_tcc_account WHERE frozen = 0)")) {
      rs.next();
      return new long[]{rs.getLong(1), rs.getLong(2)};
    }
  }

  @Override
  public void close() {
    // the pool is closed by the environment
  }
}
