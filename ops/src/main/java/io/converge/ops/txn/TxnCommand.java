package io.converge.ops.txn;

import io.converge.ops.db.CommandGroup;
import io.converge.ops.db.DbCommand;
import io.converge.ops.db.DbListCommand;
import io.converge.ops.outbox.OutboxCommand;
import io.converge.producer.TxnTickets;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code converge txn}: the producer's tickets ({@code converge_txn_ticket}), raised when a RocketMQ
 * check-back asked about a message older than the log retention that has no row (it may have
 * committed and been purged). {@code tickets} lists the open ones, oldest first, with age, check count
 * and reason; {@code resolve MESSAGE_ID --by NAME} closes one after the message was delivered or
 * discarded by hand. Exit 0 on success, 1 when the database fails, 2 on bad options, 3 when the
 * message has no open ticket.
 */
@Command(
    name = "txn",
    mixinStandardHelpOptions = true,
    description = "Producer tickets (check-backs past the log retention): list them with age and reason, resolve one.",
    subcommands = {TxnCommand.Tickets.class, TxnCommand.Resolve.class, CommandLine.HelpCommand.class})
public final class TxnCommand extends CommandGroup {

  /** {@code converge txn tickets}. */
  @Command(name = "tickets", mixinStandardHelpOptions = true, description = "Lists open producer tickets, oldest first.")
  static final class Tickets extends DbListCommand {
    @Override
    protected String name() {
      return "txn tickets";
    }

    @Override
    protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      TxnTickets tickets = TxnTickets.on(dataSource);
      long total = tickets.openCount();
      List<TxnTickets.Ticket> rows = tickets.open(limit);
      out.printf("%d open producer tickets%s%n", total, total > rows.size() ? " (oldest " + rows.size() + " shown)" : "");
      if (!rows.isEmpty()) {
        out.printf("%-36s %-20s %-24s %-26s %6s %10s  %s%n", "message id", "group", "topic", "kind", "checks", "age", "reason");
      }
      Instant now = Instant.now();
      for (TxnTickets.Ticket t : rows) {
        out.printf("%-36s %-20s %-24s %-26s %6d %10s  %s%n", t.messageId(), t.group(), t.topic(), t.kind(), t.checks(),
            OutboxCommand.age(t.createdAt(), now), t.reason());
      }
      return 0;
    }
  }

  /** {@code converge txn resolve MESSAGE_ID --by NAME [--note TEXT]}. */
  @Command(name = "resolve", mixinStandardHelpOptions = true,
      description = "Closes the open producer ticket of a message (after delivering or discarding it by hand).")
  static final class Resolve extends DbCommand {
    @Parameters(index = "0", paramLabel = "MESSAGE_ID", description = "the ticket's message id (from txn tickets)")
    String messageId;

    @Option(names = "--by", required = true, description = "who resolved it")
    String by;

    @Option(names = "--note", description = "what was done (delivered by hand, discarded)")
    String note;

    @Override
    protected String name() {
      return "txn resolve";
    }

    @Override
    protected String problem() {
      if (by.isBlank()) {
        return "--by must name who resolved the ticket, but was blank";
      }
      return super.problem();
    }

    @Override
    protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      if (!TxnTickets.on(dataSource).resolve(messageId, by, note)) {
        err.println("txn resolve: message " + messageId + " has no open ticket");
        return 3;
      }
      out.printf("resolved the ticket of message %s%n", messageId);
      return 0;
    }
  }
}
