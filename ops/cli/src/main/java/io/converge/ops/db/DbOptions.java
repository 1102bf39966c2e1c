package io.converge.ops.db;

import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine.Option;

/**
 * The database options every {@code converge} command on Converge's tables takes: {@code --jdbc-url},
 * {@code --user}, {@code --password} (default: {@value #PASSWORD_ENV}) and {@code --schema}. A mixin where the
 * database is required; an argument group ({@code --jdbc-url} and {@code --user} required once any is given) where it
 * is optional ({@code converge doctor}).
 */
public final class DbOptions {

  /** The environment variable read when {@code --password} is not given. */
  public static final String PASSWORD_ENV = "CONVERGE_DB_PASSWORD";

  @Option(names = "--jdbc-url", required = true, description = "the PostgreSQL holding Converge's tables, jdbc:postgresql://...")
  String jdbcUrl;

  @Option(names = "--user", required = true, description = "the database user")
  String user;

  @Option(names = "--password", description = "the password; default: environment variable " + PASSWORD_ENV)
  String password;

  @Option(names = "--schema", description = "the schema of Converge's tables (default: the user's search_path)")
  String schema;

  /** Null when the options are valid, else what is wrong (for a usage error, exit 2). */
  public String problem() {
    if (schema != null && !schema.matches("[A-Za-z_][A-Za-z0-9_]{0,62}")) {
      return "--schema must be a plain identifier, but was " + schema;
    }
    return null;
  }

  /**
   * A data source (connects on first use) on {@code --jdbc-url} as {@code --user}, with {@code --password} or, when
   * it is not given, the environment variable {@value #PASSWORD_ENV}, and {@code --schema} as the current schema when
   * given.
   */
  public PGSimpleDataSource dataSource() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(jdbcUrl);
    ds.setUser(user);
    String pw = password != null ? password : System.getenv(PASSWORD_ENV);
    if (pw != null) {
      ds.setPassword(pw);
    }
    if (schema != null) {
      ds.setCurrentSchema(schema);
    }
    return ds;
  }

  /** The message of {@code e} with its cause's, for one line of stderr. */
  public static String describe(Exception e) {
    return e.getMessage() + (e.getCause() != null && e.getCause() != e ? " (" + e.getCause().getMessage() + ")" : "");
  }
}
