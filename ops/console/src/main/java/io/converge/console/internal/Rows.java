package io.converge.console.internal;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the console's readers ({@code Inspector}, {@code Timeline}) share: whether a table exists in the current
 * schema (a module the application does not use has none), and the {@code details} column of their queries, a
 * {@code text[]} of name/value pairs. Not for users. Stateless.
 */
public final class Rows {

  private static final String TABLE_EXISTS = "SELECT to_regclass(?) IS NOT NULL";

  private Rows() {
  }

  /** True when {@code table} exists in the search path of {@code c}. */
  public static boolean exists(Connection c, String table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(TABLE_EXISTS)) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  /**
   * The name/value pairs of {@code array} (null: none), in order; a null value is left out when
   * {@code dropNulls}, else kept as an empty string.
   */
  public static Map<String, String> details(Array array, boolean dropNulls) throws SQLException {
    Map<String, String> details = new LinkedHashMap<>();
    if (array == null) {
      return details;
    }
    Object[] values = (Object[]) array.getArray();
    for (int i = 0; i + 1 < values.length; i += 2) {
      if (values[i + 1] != null) {
        details.put(String.valueOf(values[i]), String.valueOf(values[i + 1]));
      } else if (!dropNulls) {
        details.put(String.valueOf(values[i]), "");
      }
    }
    return details;
  }
}
