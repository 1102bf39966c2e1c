package io.converge.ops.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/** The one-row business write of the benchmarks: an order insert. Stateless. */
public final class BenchOrders {

  private static final String CREATE = """
      CREATE TABLE bench_orders (
        id bigint PRIMARY KEY,
        customer text NOT NULL,
        amount_cents bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now())
      """;
  private static final String INSERT = "INSERT INTO bench_orders (id, customer, amount_cents) VALUES (?, ?, ?)";
  private static final String COUNT = "SELECT count(*) FROM bench_orders";
  private static final String EXISTS = "SELECT 1 FROM bench_orders WHERE id = ?";

  private BenchOrders() {
  }

  /** Creates the table in the data source's schema. */
  public static void create(DataSource db) throws SQLException {
    try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
      s.execute(CREATE);
    }
  }

  /** Inserts order {@code id} on {@code c} (in the caller's transaction). */
  public static void insert(Connection c, long id, String customer) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INSERT)) {
      ps.setLong(1, id);
      ps.setString(2, customer);
      ps.setLong(3, 1999);
      ps.executeUpdate();
    }
  }

  /** Whether order {@code id} is committed (what a check-back of a plain RocketMQ service looks up). */
  public static boolean exists(DataSource db, long id) throws SQLException {
    try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(EXISTS)) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** How many orders are committed. */
  public static long count(DataSource db) throws SQLException {
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement(COUNT);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
