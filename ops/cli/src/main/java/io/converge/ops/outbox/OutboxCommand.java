package io.converge.ops.outbox;

import io.converge.ops.db.CommandGroup;
import io.converge.ops.db.DbActionCommand;
import io.converge.ops.db.DbListCommand;
import io.converge.outbox.Outbox;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Parameters;

/**
 * {@code converge outbox}: the parked keys of the outbox, visible with their age and reason, and
 * resumable. {@code parked} lists the parked rows, oldest first; {@code resume KEY} puts a parked key
 * back in play (fresh attempt count) for both relay modes: the polling relays send it from their next
 * poll, a CDC relay's sweeper once its rows are older than the sweep age (the WAL has moved past them;
 * {@code CdcRelay.resume(key)} sends them at once). Exit 0 on success, 1 when the database fails, 2 on
 * bad options, 3 when the key has no parked row.
 */
@Command(name = "outbox", description = "Parked outbox keys: list them with age and reason, resume one.", subcommands = {
    OutboxCommand.Parked.class, OutboxCommand.Resume.class, HelpCommand.class})
public final class OutboxCommand extends CommandGroup {

  /** {@code converge outbox parked}. */
  @Command(name = "parked", description = "Lists parked outbox rows, oldest first.")
  static final class Parked extends DbListCommand<Outbox.Parked> {

    Parked() {
      super("parked rows", rows(Outbox::on, Outbox::parkedCount, Outbox::parked),
          "%-24s key|%-24s topic|%-36s message id|%8s attempts|%12s parked for|%s reason",
          (p, now) -> new Object[]{p.key(), p.topic(), p.messageId(), p.attempts(),
              age(p.parkedAt() == null ? p.createdAt() : p.parkedAt(), now), orEmpty(p.reason())});
    }
  }

  /** {@code converge outbox resume KEY}. */
  @Command(name = "resume", description = "Resumes a parked key: its rows are sent again, in order, by the polling relays from their next poll"
      + " or by a CDC relay's sweeper within its sweep age.")
  static final class Resume extends DbActionCommand {

    @Parameters(index = "0", paramLabel = "KEY", description = "the parked key (the message key, or the message id of a keyless message)")
    String key;

    @Override
    protected String act(DataSource dataSource) {
      int rows = Outbox.on(dataSource).resume(key);
      return rows == 0 ? null
          : "resumed key '" + key + "': " + rows
              + " row(s) back in play for the relays (polling: next poll; CDC: the sweeper)";
    }

    @Override
    protected String nothingToDo() {
      return "key '" + key + "' has no parked row";
    }
  }
}
