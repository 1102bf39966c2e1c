package io.converge.ops.trace;

import io.converge.console.trace.Timeline;
import io.converge.console.trace.TimelineEvent;
import io.converge.ops.db.DbCommand;
import java.io.PrintWriter;
import java.util.List;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code converge trace ID}: a payment's timeline ({@link Timeline}): for a business id, message id or
 * Idempotency-Key, everything Converge recorded about it, oldest first, one line per event: time, table, the id
 * it is about, what happened, details as {@code name=value}. Exit 0 when something was found, 3 when nothing
 * was, 1 when the database fails, 2 on bad options.
 */
@Command(name = "trace", description = "A payment's timeline: everything Converge recorded about a business id, message id or Idempotency-Key, in time order.")
public final class TraceCommand extends DbCommand {

  @Parameters(index = "0", paramLabel = "ID", description = "a business id (entity id, message key), a message id or an Idempotency-Key")
  String id;

  @Override
  protected String problem() {
    if (id.isBlank()) {
      return "ID must not be blank";
    }
    return super.problem();
  }

  @Override
  protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
    List<TimelineEvent> events = Timeline.of(dataSource).trace(id);
    if (events.isEmpty()) {
      err.println(name() + ": nothing recorded about " + id);
      return 3;
    }
    out.println(events.size() + " events for " + id);
    for (TimelineEvent e : events) {
      out.println(e);
    }
    return 0;
  }
}
