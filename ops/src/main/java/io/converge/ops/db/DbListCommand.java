package io.converge.ops.db;

import picocli.CommandLine.Option;

/** A {@link DbCommand} that lists rows, oldest first, at most {@code --limit} (1 to 10000, default 100). */
public abstract class DbListCommand extends DbCommand {

  /** The most rows listed. */
  @Option(names = "--limit", defaultValue = "100", description = "most rows listed, 1 to 10000 (default ${DEFAULT-VALUE})")
  protected int limit;

  @Override
  protected String problem() {
    if (limit < 1 || limit > 10_000) {
      return "--limit must be between 1 and 10000, but was " + limit;
    }
    return super.problem();
  }
}
