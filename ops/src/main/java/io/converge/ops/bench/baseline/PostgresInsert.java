package io.converge.ops.bench.baseline;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.Scenario;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/** Baseline: one single-row INSERT committed per operation, one connection per client thread. */
public final class PostgresInsert implements Scenario {

  private static final String CREATE = """
      CREATE TABLE bench_orders (
        id bigint PRIMARY KEY,
        customer text NOT NULL,
        amount_cents bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now())
      """;
  private static final String INSERT = "INSERT INTO bench_orders (id, customer, amount_cents) VALUES (?, ?, ?)";

  private final AtomicLong ids = new AtomicLong();
  private DataSource pool;

  @Override
  public String name() {
    return "pg-insert";
  }

  @Override
  public String unit() {
    return "tx";
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    pool = env.newPool("bench_pg", threads);
    try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
      s.execute(CREATE);
    }
  }

  @Override
  public int runOnce(int worker) throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(INSERT)) {
        ps.setLong(1, ids.incrementAndGet());
        ps.setString(2, "customer-" + worker);
        ps.setLong(3, 1999);
        ps.executeUpdate();
      }
      c.commit();
    }
    return 1;
  }

  @Override
  public void close() {
    // the pool is closed by the environment
  }
}
