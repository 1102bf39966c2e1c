package io.converge.ops.bench.baseline;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.BenchOrders;
import io.converge.ops.bench.NamedScenario;
import java.sql.Connection;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/** Baseline: one single-row INSERT committed per operation, one connection per client thread. */
public final class PostgresInsert extends NamedScenario {

  private final AtomicLong ids = new AtomicLong();
  private DataSource pool;

  /** The {@code pg-insert} scenario. */
  public PostgresInsert() {
    super("pg-insert", "tx");
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    pool = env.newPool("bench_pg", threads);
    BenchOrders.create(pool);
  }

  @Override
  public int runOnce(int worker) throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      BenchOrders.insert(c, ids.incrementAndGet(), "customer-" + worker);
      c.commit();
    }
    return 1;
  }

  @Override
  public void close() {
    // the pool is closed by the environment
  }
}
