package io.converge.ops.purge;

import io.converge.ops.db.DbCommand;
import io.converge.ops.db.DurationConverter;
import io.converge.outbox.Outbox;
import io.converge.core.internal.BatchPurger;
import io.converge.core.internal.Require;
import java.io.PrintWriter;
import java.time.Duration;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code converge purge}: deletes published outbox rows older than the retention, in bounded batches
 * (each its own short transaction), printing the running total. Unpublished and parked rows are never
 * deleted. Runs {@link Outbox#purge}, the relay's own purge. Exit 0 on success, 1 when the database
 * fails, 2 on bad options.
 */
@Command(name = "purge", description = "Deletes published outbox rows older than --retention in batches of --batch-size, with progress.")
public final class PurgeCommand extends DbCommand {

  @Option(names = "--retention", defaultValue = "1d", converter = RetentionConverter.class, description = "keep rows published within this age: 1d, 12h, 30m, 90s, 500ms, a number of seconds or ISO-8601 (default ${DEFAULT-VALUE})")
  Duration retention;

  @Option(names = "--batch-size", defaultValue = "1000", description = "rows per delete transaction, 1 to 100000 (default ${DEFAULT-VALUE})")
  int batchSize;

  @Option(names = "--dry-run", description = "count the rows that would be deleted; delete nothing")
  boolean dryRun;

  @Override
  protected String problem() {
    if (batchSize < 1 || batchSize > BatchPurger.MAX_BATCH_SIZE) {
      return Require.failure("--batch-size", "be between 1 and " + BatchPurger.MAX_BATCH_SIZE, batchSize);
    }
    return super.problem();
  }

  @Override
  protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
    Outbox outbox = Outbox.on(dataSource);
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
  }

  /** {@link DurationConverter} with errors about the retention. */
  static final class RetentionConverter extends DurationConverter {

    RetentionConverter() {
      super("retention", "1d, 12h, 30m, 90s or PT6H");
    }
  }
}
