package io.converge.producer.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The business write of the producer tests: a row of a table whose first column is a text {@code id}, written on
 * the unit of work's connection, and whether it was committed. {@code table} is the test's own constant.
 */
public final class Rows {

  private Rows() {
  }

  /** Inserts row {@code id} into {@code table} on {@code c} (the unit of work's connection). */
  public static void insert(Connection c, String table, String id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " (id) VALUES (?)")) {
      ps.setString(1, id);
      ps.executeUpdate();
    }
  }

  /** Whether row {@code id} of {@code table} is committed, read on a connection of its own. */
  public static boolean exists(DataSource db, String table, String id) throws SQLException {
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + table + " WHERE id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }
}
