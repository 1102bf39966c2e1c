package io.converge.ops;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.ops.db.FirstValue;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The fixture of the {@code converge} commands' tests: a new schema on the JVM's PostgreSQL with
 * Converge's migrations applied, and the command line run against it.
 *
 * @param pg the server
 * @param dataSource the schema's data source
 * @param schema the schema's name
 */
public record CliSchema(ConvergePostgres pg, DataSource dataSource, String schema) {

  /** A new schema {@code prefix_...} with the tables of {@code migrations} ({@code outbox}, {@code consumer}, ...). */
  public static CliSchema create(String prefix, String... migrations) throws Exception {
    ConvergePostgres pg = ConvergePostgres.shared();
    DataSource ds = pg.newSchema(prefix);
    for (String m : migrations) {
      Migrations.apply(ds, m);
    }
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_schema()")) {
      rs.next();
      return new CliSchema(pg, ds, rs.getString(1));
    }
  }

  /** Runs {@code converge command...} with the database options of this schema. */
  public CliRun run(String... command) {
    return runIn(schema, command);
  }

  /** Runs {@code converge command...} with the database options of {@code otherSchema} (e.g. one that does not exist). */
  public CliRun runIn(String otherSchema, String... command) {
    List<String> args = new ArrayList<>(List.of(command));
    args.addAll(
        List.of("--jdbc-url", pg.jdbcUrl(), "--user", pg.user(), "--password", pg.password(), "--schema", otherSchema));
    return CliRun.of(args.toArray(String[]::new));
  }

  /** The database options of the commands, the password left to the environment ({@link #env()}), as the README shows. */
  public List<String> options() {
    return List.of("--jdbc-url", pg.jdbcUrl(), "--user", pg.user(), "--schema", schema);
  }

  /** The environment of a command given {@link #options()}: the password in {@code CONVERGE_DB_PASSWORD}. */
  public Map<String, String> env() {
    return Map.of("CONVERGE_DB_PASSWORD", pg.password());
  }

  /** Runs {@code sql} statements in this schema. */
  public void execute(String... sql) throws Exception {
    try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
      for (String statement : sql) {
        s.execute(statement);
      }
    }
  }

  /** The first column of the first row of {@code sql}, a count or an id. */
  public long count(String sql) throws Exception {
    return FirstValue.ofLong(dataSource, sql);
  }

}
