package io.converge.examples.events;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** JDBC reads the orchestrated flow's participants share (their steps run on the participant's connection). */
public final class Rows {

  private Rows() {
  }

  /** Whether {@code table} has a row whose {@code column} is {@code key}, read on {@code c}. */
  public static boolean exists(Connection c, String table, String column, String key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + table + " WHERE " + column + " = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }
}
