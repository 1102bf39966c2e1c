package io.converge.ops.db;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/** Reads one value, the first row's, of a query: a count, an id, the current schema. */
public final class FirstValue {

  /** How the value is read from the first row, e.g. {@code rs -> rs.getLong(1)}. */
  @FunctionalInterface
  public interface Reader<T> {

    T read(ResultSet row) throws SQLException;
  }

  private FirstValue() {
  }

  /** The value {@code reader} reads from the first row of {@code sql} on {@code dataSource}. */
  public static <T> T of(DataSource dataSource, String sql, Reader<T> reader) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return reader.read(rs);
    }
  }

  /** The first column of the first row of {@code sql}, a count or an id. */
  public static long ofLong(DataSource dataSource, String sql) throws SQLException {
    return of(dataSource, sql, rs -> rs.getLong(1));
  }
}
