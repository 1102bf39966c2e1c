package io.converge.ops.outbox;

import io.converge.ops.db.CommandGroup;
import io.converge.ops.db.DbActionCommand;
import io.converge.ops.db.DbListCommand;
import io.converge.outbox.AmbiguousKeyException;
import io.converge.outbox.Outbox;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code converge outbox}: the parked keys of the outbox, visible with their age and reason, and
 * resumable. {@code parked} lists the parked rows, oldest first; {@code resume KEY [--tenant T] [--topic P]}
 * puts a parked key's line (its rows of one tenant on one topic) back in play (fresh attempt count) for
 * both relay modes: the polling relays send it from their next poll, a CDC relay's sweeper once its rows
 * are older than the sweep age (the WAL has moved past them; {@code CdcRelay.resume(key)} sends them at
 * once). Exit 0 on success, 1 when the database fails, 2 on bad options or a key parked on more than one
 * line that the options do not narrow to one (nothing resumed), 3 when the key has no parked row.
 */
@Command(name = "outbox", description = "Parked outbox keys: list them with age and reason, resume one.", subcommands = {
    OutboxCommand.Parked.class, OutboxCommand.Resume.class, HelpCommand.class})
public final class OutboxCommand extends CommandGroup {

  /** {@code converge outbox parked}. */
  @Command(name = "parked", description = "Lists parked outbox rows, oldest first.")
  static final class Parked extends DbListCommand<Outbox.Parked> {

    Parked() {
      super("parked rows", rows(Outbox::on, Outbox::parkedCount, Outbox::parked),
          "%-24s key|%-16s tenant|%-24s topic|%-36s message id|%8s attempts|%12s parked for|%s reason",
          (p, now) -> new Object[]{p.key(), p.tenant(), p.topic(), p.messageId(), p.attempts(),
              age(p.parkedAt() == null ? p.createdAt() : p.parkedAt(), now), orEmpty(p.reason())});
    }
  }

  /** {@code converge outbox resume KEY [--tenant T] [--topic P]}. */
  @Command(name = "resume", description = "Resumes a parked key's line (its rows of one tenant on one topic): its rows are sent again, in"
      + " order, by the polling relays from their next poll or by a CDC relay's sweeper within its sweep age. A key parked"
      + " for several tenants or topics needs --tenant and/or --topic (exit 2, nothing resumed).")
  static final class Resume extends DbActionCommand {

    @Parameters(index = "0", paramLabel = "KEY", description = "the parked key (the message key, or the message id of a keyless message)")
    String key;

    @Option(names = "--tenant", paramLabel = "TENANT", description = "the tenant of the parked line (default: any, if only one is parked)")
    String tenant;

    @Option(names = "--topic", paramLabel = "TOPIC", description = "the topic of the parked line (default: any, if only one is parked)")
    String topic;

    @Override
    protected String act(DataSource dataSource) {
      int rows;
      try {
        rows = Outbox.on(dataSource).resume(tenant, topic, key);
      } catch (AmbiguousKeyException e) {
        throw new Underspecified("key '" + key + "' is parked on " + e.lines().size() + " lines ("
            + String.join("; ", e.lines()) + "): name one with --tenant and/or --topic; nothing was resumed", e);
      }
      return rows == 0 ? null
          : "resumed key '" + key + "'" + line() + ": " + rows
              + " row(s) back in play for the relays (polling: next poll; CDC: the sweeper)";
    }

    private String line() {
      return (tenant == null ? "" : " of tenant '" + tenant + "'") + (topic == null ? "" : " on topic '" + topic + "'");
    }

    @Override
    protected String nothingToDo() {
      return "key '" + key + "'" + line() + " has no parked row";
    }
  }
}
