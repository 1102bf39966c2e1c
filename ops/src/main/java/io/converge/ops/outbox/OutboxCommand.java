package io.converge.ops.outbox;

import io.converge.ops.db.CommandGroup;
import io.converge.ops.db.DbCommand;
import io.converge.ops.db.DbListCommand;
import io.converge.outbox.Outbox;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code converge outbox}: the parked keys of the outbox, visible with their age and reason, and
 * resumable. {@code parked} lists the parked rows, oldest first; {@code resume KEY} puts a parked key
 * back in play (fresh attempt count) for both relay modes: the polling relays send it from their next
 * poll, a CDC relay's sweeper once its rows are older than the sweep age (the WAL has moved past them;
 * {@code CdcRelay.resume(key)} sends them at once). Exit 0 on success, 1 when the database fails, 2 on
 * bad options, 3 when the key has no parked row.
 */
@Command(
    name = "outbox",
    mixinStandardHelpOptions = true,
    description = "Parked outbox keys: list them with age and reason, resume one.",
    subcommands = {OutboxCommand.Parked.class, OutboxCommand.Resume.class, CommandLine.HelpCommand.class})
public final class OutboxCommand extends CommandGroup {

  /** {@code converge outbox parked}. */
  @Command(name = "parked", mixinStandardHelpOptions = true, description = "Lists parked outbox rows, oldest first.")
  static final class Parked extends DbListCommand {
    @Override
    protected String name() {
      return "outbox parked";
    }

    @Override
    protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      Outbox outbox = Outbox.on(dataSource);
      long total = outbox.parkedCount();
      List<Outbox.Parked> rows = outbox.parked(limit);
      out.printf("%d parked rows%s%n", total, total > rows.size() ? " (oldest " + rows.size() + " shown)" : "");
      if (!rows.isEmpty()) {
        out.printf("%-24s %-24s %-36s %8s %12s  %s%n", "key", "topic", "message id", "attempts", "parked for", "reason");
      }
      Instant now = Instant.now();
      for (Outbox.Parked p : rows) {
        out.printf("%-24s %-24s %-36s %8d %12s  %s%n", p.key(), p.topic(), p.messageId(), p.attempts(),
            age(p.parkedAt() == null ? p.createdAt() : p.parkedAt(), now), p.reason() == null ? "" : p.reason());
      }
      return 0;
    }
  }

  /** {@code converge outbox resume KEY}. */
  @Command(name = "resume", mixinStandardHelpOptions = true,
      description = "Resumes a parked key: its rows are sent again, in order, by the polling relays from their next poll"
          + " or by a CDC relay's sweeper within its sweep age.")
  static final class Resume extends DbCommand {
    @Parameters(index = "0", paramLabel = "KEY", description = "the parked key (the message key, or the message id of a keyless message)")
    String key;

    @Override
    protected String name() {
      return "outbox resume";
    }

    @Override
    protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      int rows = Outbox.on(dataSource).resume(key);
      if (rows == 0) {
        err.println("outbox resume: key '" + key + "' has no parked row");
        return 3;
      }
      out.printf("resumed key '%s': %d row(s) back in play for the relays (polling: next poll; CDC: the sweeper)%n", key, rows);
      return 0;
    }
  }

  /** {@code 3d 4h}, {@code 2h 5m}, {@code 12m 3s}, {@code 40s}. */
  public static String age(Instant since, Instant now) {
    Duration d = Duration.between(since, now);
    if (d.isNegative()) {
      d = Duration.ZERO;
    }
    if (d.toDays() > 0) {
      return d.toDays() + "d " + d.toHoursPart() + "h";
    }
    if (d.toHours() > 0) {
      return d.toHours() + "h " + d.toMinutesPart() + "m";
    }
    if (d.toMinutes() > 0) {
      return d.toMinutes() + "m " + d.toSecondsPart() + "s";
    }
    return d.toSeconds() + "s";
  }
}
