package io.converge.consumer.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;

/** The JDBC of the consumer stores: statements with their arguments bound by type. Stateless. */
final class Jdbc {

  private Jdbc() {
  }

  static int update(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, args);
      return ps.executeUpdate();
    }
  }

  /** The first column of the first row, or {@code none} without a row. */
  static int queryInt(Connection c, String sql, int none, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, args);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getInt(1) : none;
      }
    }
  }

  /** Inserts one row and returns its generated {@code id}. */
  static long insert(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)) {
      bind(ps, args);
      ps.executeUpdate();
      try (ResultSet rs = ps.getGeneratedKeys()) {
        rs.next();
        return rs.getLong("id");
      }
    }
  }

  /**
   * Binds by type: an {@link Instant} as a timestamp, bytes as bytea, texts as a {@code text[]}, a null or a text
   * as text.
   */
  static void bind(PreparedStatement ps, Object... args) throws SQLException {
    for (int i = 0; i < args.length; i++) {
      Object arg = args[i];
      if (arg instanceof Instant t) {
        ps.setTimestamp(i + 1, Timestamp.from(t));
      } else if (arg instanceof byte[] b) {
        ps.setBytes(i + 1, b);
      } else if (arg instanceof Integer n) {
        ps.setInt(i + 1, n);
      } else if (arg instanceof Long n) {
        ps.setLong(i + 1, n);
      } else if (arg instanceof String[] texts) {
        ps.setArray(i + 1, ps.getConnection().createArrayOf("text", texts));
      } else {
        ps.setString(i + 1, (String) arg);
      }
    }
  }
}
