package io.converge.ops.purge;

import io.converge.outbox.Outbox;
import io.converge.producer.ConvergeException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code converge purge}: deletes published outbox rows older than the retention, in bounded batches
 * (each its own short transaction), printing the running total. Unpublished and parked rows are never
 * deleted. Runs {@link Outbox#purge}, the relay's own purge. Exit 0 on success, 1 when the database
 * fails, 2 on bad options.
 */
@Command(
    name = "purge",
    mixinStandardHelpOptions = true,
    description = "Deletes published outbox rows older than --retention in batches of --batch-size, with progress.")
public final class PurgeCommand implements Callable<Integer> {

  /** The environment variable read when {@code --password} is not given. */
  public static final String PASSWORD_ENV = "CONVERGE_DB_PASSWORD";

  @Spec
  CommandSpec spec;

  @Option(names = "--jdbc-url", required = true, description = "the PostgreSQL holding converge_outbox, jdbc:postgresql://...")
  String jdbcUrl;

  @Option(names = "--user", required = true, description = "the database user")
  String user;

  @Option(names = "--password", description = "the password; default: environment variable " + PASSWORD_ENV)
  String password;

  @Option(names = "--schema", description = "the schema of converge_outbox (default: the user's search_path)")
  String schema;

  @Option(names = "--retention", defaultValue = "1d", converter = RetentionConverter.class,
      description = "keep rows published within this age: 1d, 12h, 30m, 90s or ISO-8601 (default ${DEFAULT-VALUE})")
  Duration retention;

  @Option(names = "--batch-size", defaultValue = "1000", description = "rows per delete transaction, 1 to 100000 (default ${DEFAULT-VALUE})")
  int batchSize;

  @Option(names = "--dry-run", description = "count the rows that would be deleted; delete nothing")
  boolean dryRun;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (batchSize < 1 || batchSize > 100_000) {
      err.println("purge: --batch-size must be between 1 and 100000, but was " + batchSize);
      return 2;
    }
    if (schema != null && !schema.matches("[A-Za-z_][A-Za-z0-9_]{0,62}")) {
      err.println("purge: --schema must be a plain identifier, but was " + schema);
      return 2;
    }
    Outbox outbox = Outbox.on(dataSource());
    try {
      if (dryRun) {
        out.printf("dry run: %d published rows older than %s would be purged%n", outbox.purgeable(retention), retention);
        return 0;
      }
      out.printf("purging published outbox rows older than %s in batches of %d%n", retention, batchSize);
      long started = System.nanoTime();
      long total = outbox.purge(retention, batchSize, n -> {
        out.printf("  purged %d rows%n", n);
        out.flush();
      });
      out.printf("done: purged %d rows in %d ms%n", total, (System.nanoTime() - started) / 1_000_000);
      return 0;
    } catch (ConvergeException e) {
      err.println("purge failed: " + e.getMessage() + (e.getCause() != null ? " (" + e.getCause().getMessage() + ")" : ""));
      return 1;
    }
  }

  private PGSimpleDataSource dataSource() {
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
}
