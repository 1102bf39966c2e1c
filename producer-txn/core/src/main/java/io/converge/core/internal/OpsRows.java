package io.converge.core.internal;

import io.converge.core.DatabaseUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The JDBC under the operators' views (producer tickets, parked Pulsar transactions, consumer dead
 * letters and tickets): list rows with a limit, count them, resolve or resume one by a conditional
 * update. Each call is one short statement on a borrowed connection; a database error is a
 * {@link DatabaseUnavailableException} naming what was read or changed. Immutable; thread-safe.
 */
public final class OpsRows {

  /** Maps the current row of a result set. */
  @FunctionalInterface
  public interface Row<T> {

    /** The value of the current row. */
    T map(ResultSet rs) throws SQLException;
  }

  /** Binds the parameters of a statement. */
  @FunctionalInterface
  public interface Binder {

    /** Sets the parameters of {@code ps}. */
    void bind(PreparedStatement ps) throws SQLException;
  }

  private final DataSource dataSource;

  private OpsRows(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** The rows on {@code dataSource}. */
  public static OpsRows on(DataSource dataSource) {
    return new OpsRows(Objects.requireNonNull(dataSource, "dataSource"));
  }

  /**
   * The rows of {@code sql}, whose one parameter is the limit, mapped by {@code row}.
   *
   * @param what how an error names the rows: "Could not read {@code what}"
   * @param maxLimit the largest limit accepted ({@link Integer#MAX_VALUE}: no bound)
   * @throws IllegalArgumentException when {@code limit} is not within 1..{@code maxLimit}
   */
  public <T> List<T> list(String what, String sql, int limit, int maxLimit, Row<T> row) {
    if (maxLimit == Integer.MAX_VALUE) {
      Require.that(limit >= 1, "limit", "be at least 1", limit);
    } else {
      Require.between("limit", limit, 1, maxLimit);
    }
    List<T> out = new ArrayList<>();
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(row.map(rs));
        }
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not read " + what, null, e);
    }
    return out;
  }

  /**
   * The single number {@code sql} selects (a {@code count(*)}).
   *
   * @param what how an error names the rows: "Could not count {@code what}"
   */
  public long count(String what, String sql) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not count " + what, null, e);
    }
  }

  /**
   * Runs the conditional update {@code sql} (e.g. {@code … WHERE id = ? AND status = 'OPEN'}).
   *
   * @param failure the message of the error when the database fails
   * @param messageId the message involved, for the error (nullable)
   * @return whether exactly one row changed (false: the row was not in the expected state)
   */
  public boolean updateOne(String failure, String messageId, String sql, Binder binder) {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw DatabaseErrors.translate(failure, messageId, e);
    }
  }
}
