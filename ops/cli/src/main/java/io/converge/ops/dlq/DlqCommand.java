package io.converge.ops.dlq;

import io.converge.consumer.ConsumerOps;
import io.converge.ops.db.CommandGroup;
import io.converge.ops.db.DbActionCommand;
import io.converge.ops.db.DbListCommand;
import io.converge.ops.db.DbResolveCommand;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Parameters;

/**
 * {@code converge dlq}: the consumers' dead letters ({@code converge_dlq}) and manual tickets
 * ({@code converge_ticket}), visible with age and reason. {@code list} and {@code tickets} print them,
 * oldest first (messages held behind a parked message of their key show reason code {@code HELD});
 * {@code discard ID} closes a dead letter a person decided not to process (the running consumer then
 * releases the messages held behind it, in order);
 * {@code resolve ID --by NAME} closes a ticket. Re-running a dead letter needs its handler, so it is
 * {@code IdempotentHandler.resume(id)} in the application, not a CLI command. Exit 0 on success, 1
 * when the database fails, 2 on bad options, 3 when the id is not parked / not open.
 */
@Command(name = "dlq", description = "Consumers' dead letters and tickets: list them with age and reason, discard or resolve one.", subcommands = {
    DlqCommand.ListParked.class, DlqCommand.Discard.class, DlqCommand.Tickets.class, DlqCommand.Resolve.class,
    DlqCommand.Redrive.class, HelpCommand.class})
public final class DlqCommand extends CommandGroup {

  /** {@code converge dlq list}. */
  @Command(name = "list", description = "Lists parked dead letters, oldest first.")
  static final class ListParked extends DbListCommand<ConsumerOps.DeadLetter> {

    ListParked() {
      super("dead letters", rows(ConsumerOps::of, ConsumerOps::countParked, ConsumerOps::parked),
          "%8s id|%-12s tenant|%-24s group|%-24s topic|%-36s message id|%8s attempts|%10s age|%s reason",
          (d, now) -> new Object[]{d.id(), d.tenant(), d.group(), d.topic(), orNone(d.messageId()), d.attempts(),
              age(d.age()), d.reasonCode() + ": " + orEmpty(d.reason())});
    }
  }

  /** {@code converge dlq discard ID}. */
  @Command(name = "discard", description = "Discards a parked dead letter (it is not processed).")
  static final class Discard extends DbActionCommand {

    @Parameters(index = "0", paramLabel = "ID", description = "the dead letter's id (from dlq list)")
    long id;

    @Override
    protected String act(DataSource dataSource) {
      return ConsumerOps.of(dataSource).discard(id) ? "discarded dead letter " + id : null;
    }

    @Override
    protected String nothingToDo() {
      return "dead letter " + id + " is not parked";
    }
  }

  /** {@code converge dlq redrive ID}. */
  @Command(name = "redrive", description = "Marks a parked dead letter for re-drive: its consumer's handler runs it again within its"
      + " release interval (default 5 s), then the messages held behind it.")
  static final class Redrive extends DbActionCommand {

    @Parameters(index = "0", paramLabel = "ID", description = "the dead letter's id (from dlq list)")
    long id;

    @Override
    protected String act(DataSource dataSource) {
      return ConsumerOps.of(dataSource).redrive(id)
          ? "marked dead letter " + id + " for re-drive: its consumer's handler runs it within its release interval"
          : null;
    }

    @Override
    protected String nothingToDo() {
      return "dead letter " + id + " is not parked (or is held behind another, or already marked); one parked as"
          + " INVALID_ENVELOPE cannot be re-driven: publish its payload again with a valid envelope, then discard it";
    }
  }

  /** {@code converge dlq tickets}. */
  @Command(name = "tickets", description = "Lists open tickets, oldest first.")
  static final class Tickets extends DbListCommand<ConsumerOps.Ticket> {

    Tickets() {
      super("open tickets", rows(ConsumerOps::of, ops -> -1, ConsumerOps::openTickets),
          "%8s id|%-10s kind|%-12s tenant|%-24s group|%-36s message id|%8s dlq id|%10s age|%s reason",
          (t, now) -> new Object[]{t.id(), t.kind(), t.tenant(), t.group(), orNone(t.messageId()),
              t.dlqId() == null ? "-" : t.dlqId(), age(t.age()), orEmpty(t.reason())});
    }
  }

  /** {@code text}, or {@code (none)} when null. */
  private static String orNone(String text) {
    return text == null ? "(none)" : text;
  }

  /** {@code converge dlq resolve ID --by NAME [--note TEXT]}. */
  @Command(name = "resolve", description = "Closes an open ticket.")
  static final class Resolve extends DbResolveCommand {

    @Parameters(index = "0", paramLabel = "ID", description = "the ticket's id (from dlq tickets)")
    long id;

    @Override
    protected String act(DataSource dataSource) {
      return ConsumerOps.of(dataSource).resolveTicket(id, by, note) ? "resolved ticket " + id : null;
    }

    @Override
    protected String nothingToDo() {
      return "ticket " + id + " is not open";
    }
  }
}
