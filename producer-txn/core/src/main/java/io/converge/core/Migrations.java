package io.converge.core;

import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Applies the versioned schema of one Converge module. Each module ships its migrations at
 * {@code classpath:db/converge/<module>} and keeps its own history table
 * {@code converge_schema_history_<module>}, so modules are versioned independently and a user adds
 * only the tables of the modules they use.
 *
 * <p>A database that cannot be reached yet (refused, frozen, starting, a pool timing out) is waited
 * for with backoff, each wait logged, up to {@link DatabaseWait#DEFAULT_LIMIT} (or the limit given):
 * a service started while its database restarts starts when it is back.
 *
 * <p>Thread-safe; migrating twice is a no-op; concurrent migrations of one schema are serialised by
 * Flyway's lock on the history table.
 */
public final class Migrations {

  private static final Pattern MODULE = Pattern.compile("[a-z][a-z0-9_]{0,30}");

  private Migrations() {
  }

  /**
   * Applies the pending migrations of {@code module} (e.g. {@code "producer"}) to {@code dataSource}
   * in its current schema, waiting for the database as long as the {@link DatabaseWait} assigned to
   * {@code dataSource} says ({@code converge.startup.database-wait} in Spring), else up to
   * {@link DatabaseWait#DEFAULT_LIMIT}.
   *
   * @return the number of migrations applied now (0 when the schema was up to date)
   * @throws ConvergeException naming the module when a migration fails or the database stays
   *     unreachable (then a {@link io.converge.core.DatabaseUnavailableException} naming the limit)
   */
  public static int apply(DataSource dataSource, String module) {
    return apply(dataSource, module, DatabaseWait.of(dataSource));
  }

  /**
   * As {@link #apply(DataSource, String)}, waiting for the database as {@code wait} says.
   *
   * @param wait how long to wait for an unreachable database ({@code DatabaseWait.upTo(Duration.ZERO, ..)}: not at all)
   */
  public static int apply(DataSource dataSource, String module, DatabaseWait wait) {
    if (module == null || !MODULE.matcher(module).matches()) {
      throw new IllegalArgumentException(
          "module must match " + MODULE.pattern() + ", but was " + module);
    }
    java.util.Objects.requireNonNull(wait, "wait");
    return wait.run("the migrations of Converge module '" + module + "'", () -> migrate(dataSource, module));
  }

  /**
   * Where the schema of {@code module} stands against the migrations this build ships, without changing it
   * (for {@code converge doctor}). Does not wait for the database.
   *
   * @throws ConvergeException naming the module when the database cannot be read or the module ships no migrations
   */
  public static Status status(DataSource dataSource, String module) {
    if (module == null || !MODULE.matcher(module).matches()) {
      throw new IllegalArgumentException(
          "module must match " + MODULE.pattern() + ", but was " + module);
    }
    try {
      MigrationInfoService info = flyway(dataSource, module).info();
      MigrationInfo current = info.current();
      String latest = null;
      boolean ahead = false;
      for (MigrationInfo m : info.all()) {
        if (m.getVersion() == null) {
          continue;
        }
        if (m.getState().isResolved()) {
          latest = m.getVersion().getVersion();
        } else if (m.getState().isApplied()) {
          ahead = true;
        }
      }
      return new Status(module, current == null ? null : current.getVersion().getVersion(), latest,
          info.pending().length, ahead);
    } catch (FlywayException e) {
      throw new ConvergeException("Could not read the Converge schema history of module '" + module + "'", e);
    }
  }

  /**
   * The schema of one module against this build's migrations.
   *
   * @param module the module, e.g. {@code producer}
   * @param applied the version applied, null when none is (no history table)
   * @param latest the highest version this build ships
   * @param pending how many of this build's migrations are not applied
   * @param ahead whether the database holds a version this build does not know (a newer Converge migrated it)
   */
  public record Status(String module, String applied, String latest, int pending, boolean ahead) {
  }

  private static Flyway flyway(DataSource dataSource, String module) {
    return Flyway.configure(Migrations.class.getClassLoader())
        .dataSource(dataSource)
        .locations("classpath:db/converge/" + module)
        .table("converge_schema_history_" + module)
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .failOnMissingLocations(true)
        .load();
  }

  private static int migrate(DataSource dataSource, String module) {
    try {
      MigrateResult result = flyway(dataSource, module).migrate();
      return result.migrationsExecuted;
    } catch (FlywayException e) {
      throw new ConvergeException("Could not migrate the Converge schema of module '" + module + "'", e);
    }
  }
}
