package io.converge.ops.db;

import java.io.PrintWriter;
import javax.sql.DataSource;

/**
 * A {@link DbCommand} that changes the state of one parked row, ticket or key (resolve, resume,
 * discard): exit 0 with what was done on stdout, or 3 with {@code <name>: <what is not parked>} on
 * stderr when the row is not in the state the action needs.
 */
public abstract class DbActionCommand extends DbCommand {

  /** Acts on {@code dataSource}; returns what was done, for stdout, or null when there was nothing to act on. */
  protected abstract String act(DataSource dataSource);

  /** Why nothing was done, e.g. {@code dead letter 5 is not parked}. */
  protected abstract String nothingToDo();

  @Override
  protected final int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
    String done = act(dataSource);
    if (done == null) {
      err.println(name() + ": " + nothingToDo());
      return 3;
    }
    out.println(done);
    return 0;
  }
}
