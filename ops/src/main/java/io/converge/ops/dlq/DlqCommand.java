package io.converge.ops.dlq;

import io.converge.consumer.ConsumerOps;
import io.converge.ops.db.CommandGroup;
import io.converge.ops.db.DbActionCommand;
import io.converge.ops.db.DbListCommand;
import java.util.List;
import javax.sql.DataSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code converge dlq}: the consumers' dead letters ({@code converge_dlq}) and manual tickets
 * ({@code converge_ticket}), visible with age and reason. {@code list} and {@code tickets} print them,
 * oldest first; {@code discard ID} closes a dead letter a person decided not to process;
 * {@code resolve ID --by NAME} closes a ticket. Re-running a dead letter needs its handler, so it is
 * {@code IdempotentHandler.resume(id)} in the application, not a CLI command. Exit 0 on success, 1
 * when the database fails, 2 on bad options, 3 when the id is not parked / not open.
 */
@Command(name = "dlq", mixinStandardHelpOptions = true, description = "Consumers' dead letters and tickets: list them with age and reason, discard or resolve one.", subcommands = {
    DlqCommand.ListParked.class, DlqCommand.Discard.class, DlqCommand.Tickets.class, DlqCommand.Resolve.class,
    CommandLine.HelpCommand.class})
public final class DlqCommand extends CommandGroup {

  /** {@code converge dlq list}. */
  @Command(name = "list", mixinStandardHelpOptions = true, description = "Lists parked dead letters, oldest first.")
  static final class ListParked extends DbListCommand<ConsumerOps.DeadLetter> {

    ListParked() {
      super("dlq list", "dead letters");
    }

    @Override
    protected Page<ConsumerOps.DeadLetter> page(DataSource dataSource, int limit) {
      ConsumerOps ops = ConsumerOps.of(dataSource);
      return new Page<>(ops.countParked(), ops.parked(limit));
    }

    @Override
    protected List<Column<ConsumerOps.DeadLetter>> columns() {
      return List.of(new Column<>("id", "%8s", ConsumerOps.DeadLetter::id),
          new Column<>("tenant", "%-12s", ConsumerOps.DeadLetter::tenant),
          new Column<>("group", "%-24s", ConsumerOps.DeadLetter::group),
          new Column<>("topic", "%-24s", ConsumerOps.DeadLetter::topic),
          new Column<>("message id", "%-36s", d -> d.messageId() == null ? "(none)" : d.messageId()),
          new Column<>("attempts", "%8s", ConsumerOps.DeadLetter::attempts),
          new Column<>("age", "%10s", d -> age(d.age())),
          new Column<>("reason", "%s", d -> d.reasonCode() + ": " + orEmpty(d.reason())));
    }
  }

  /** {@code converge dlq discard ID}. */
  @Command(name = "discard", mixinStandardHelpOptions = true, description = "Discards a parked dead letter (it is not processed).")
  static final class Discard extends DbActionCommand {

    @Parameters(index = "0", paramLabel = "ID", description = "the dead letter's id (from dlq list)")
    long id;

    Discard() {
      super("dlq discard");
    }

    @Override
    protected String act(DataSource dataSource) {
      return ConsumerOps.of(dataSource).discard(id) ? "discarded dead letter " + id : null;
    }

    @Override
    protected String nothingToDo() {
      return "dead letter " + id + " is not parked";
    }
  }

  /** {@code converge dlq tickets}. */
  @Command(name = "tickets", mixinStandardHelpOptions = true, description = "Lists open tickets, oldest first.")
  static final class Tickets extends DbListCommand<ConsumerOps.Ticket> {

    Tickets() {
      super("dlq tickets", "open tickets");
    }

    @Override
    protected Page<ConsumerOps.Ticket> page(DataSource dataSource, int limit) {
      return new Page<>(-1, ConsumerOps.of(dataSource).openTickets(limit));
    }

    @Override
    protected List<Column<ConsumerOps.Ticket>> columns() {
      return List.of(new Column<>("id", "%8s", ConsumerOps.Ticket::id),
          new Column<>("kind", "%-10s", ConsumerOps.Ticket::kind),
          new Column<>("tenant", "%-12s", ConsumerOps.Ticket::tenant),
          new Column<>("group", "%-24s", ConsumerOps.Ticket::group),
          new Column<>("message id", "%-36s", t -> t.messageId() == null ? "(none)" : t.messageId()),
          new Column<>("dlq id", "%8s", t -> t.dlqId() == null ? "-" : t.dlqId()),
          new Column<>("age", "%10s", t -> age(t.age())),
          new Column<>("reason", "%s", t -> orEmpty(t.reason())));
    }
  }

  /** {@code converge dlq resolve ID --by NAME [--note TEXT]}. */
  @Command(name = "resolve", mixinStandardHelpOptions = true, description = "Closes an open ticket.")
  static final class Resolve extends DbActionCommand {

    @Parameters(index = "0", paramLabel = "ID", description = "the ticket's id (from dlq tickets)")
    long id;

    @Option(names = "--by", required = true, description = "who resolved it")
    String by;

    @Option(names = "--note", description = "what was done")
    String note;

    Resolve() {
      super("dlq resolve");
    }

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
