package io.converge.core.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * SQL with named parameters ({@code :name}), parsed once into the {@code ?} text JDBC prepares and the name at each
 * position. A name may appear several times; {@code ::} (a PostgreSQL cast), quoted literals and identifiers and
 * comments are left alone. Statements are composed from named fragments without counting positions: a statement
 * sent after this one in the same text binds its parameters after {@link #parameterCount()}. Immutable;
 * thread-safe.
 */
public final class NamedStatement {

  private final String named;
  private final String sql;
  private final List<String> names;

  private NamedStatement(String named, String sql, List<String> names) {
    this.named = named;
    this.sql = sql;
    this.names = names;
  }

  /**
   * Parses {@code named}.
   *
   * @throws IllegalArgumentException when it has a positional {@code ?} parameter or a {@code :} without a name
   */
  public static NamedStatement parse(String named) {
    Objects.requireNonNull(named, "named");
    StringBuilder sql = new StringBuilder(named.length());
    List<String> names = new ArrayList<>();
    int i = 0;
    while (i < named.length()) {
      char ch = named.charAt(i);
      int end = skipped(named, i);
      if (end > i) {
        sql.append(named, i, end);
        i = end;
      } else if (ch == '?') {
        throw new IllegalArgumentException("a named statement has no positional parameter (?), but was: " + named);
      } else if (ch == ':' && i + 1 < named.length() && named.charAt(i + 1) == ':') {
        sql.append("::");
        i += 2;
      } else if (ch == ':') {
        int start = i + 1;
        int j = start;
        while (j < named.length() && (Character.isLetterOrDigit(named.charAt(j)) || named.charAt(j) == '_')) {
          j++;
        }
        if (j == start || Character.isDigit(named.charAt(start))) {
          throw new IllegalArgumentException("a ':' must start a parameter name at " + i + ", but was: " + named);
        }
        names.add(named.substring(start, j));
        sql.append('?');
        i = j;
      } else {
        sql.append(ch);
        i++;
      }
    }
    return new NamedStatement(named, sql.toString(), List.copyOf(names));
  }

  /** The end of the quoted text or comment starting at {@code i}, or {@code i} when none starts there. */
  private static int skipped(String s, int i) {
    char ch = s.charAt(i);
    if (ch == '\'' || ch == '"') {
      int end = s.indexOf(ch, i + 1);
      while (end > 0 && end + 1 < s.length() && s.charAt(end + 1) == ch) { // a doubled quote is part of it
        end = s.indexOf(ch, end + 2);
      }
      return end < 0 ? s.length() : end + 1;
    }
    if (s.startsWith("--", i)) {
      int end = s.indexOf('\n', i);
      return end < 0 ? s.length() : end;
    }
    if (s.startsWith("/*", i)) {
      int end = s.indexOf("*/", i + 2);
      return end < 0 ? s.length() : end + 2;
    }
    return i;
  }

  /** The SQL to prepare, each parameter a {@code ?}. */
  public String sql() {
    return sql;
  }

  /** The number of {@code ?} in {@link #sql()}: where the parameters of a statement sent after it start. */
  public int parameterCount() {
    return names.size();
  }

  /** The parameter name at each position, in order (a repeated name appears at each of its positions). */
  public List<String> names() {
    return names;
  }

  /**
   * The values in parameter order, for binding at positions 1 to {@link #parameterCount()}.
   *
   * @param values a value (null allowed) for every name
   * @throws IllegalArgumentException when a name has no value
   */
  public Object[] arguments(Map<String, ?> values) {
    Object[] args = new Object[names.size()];
    for (int p = 0; p < args.length; p++) {
      String name = names.get(p);
      if (!values.containsKey(name)) {
        throw new IllegalArgumentException("parameter :" + name + " has no value; values were given for "
            + values.keySet());
      }
      args[p] = values.get(name);
    }
    return args;
  }

  /** The statement as written, with its {@code :name} parameters. */
  @Override
  public String toString() {
    return named;
  }
}
