package io.converge.ops.txn;

import io.converge.ops.db.CommandGroup;
import io.converge.ops.db.DbListCommand;
import io.converge.ops.db.DbResolveCommand;
import io.converge.producer.TxnTickets;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Parameters;

/**
 * {@code converge txn}: the producer's tickets ({@code converge_txn_ticket}), raised when a RocketMQ
 * check-back asked about a message older than the log retention that has no row (it may have
 * committed and been purged). {@code tickets} lists the open ones, oldest first, with age, check count
 * and reason; {@code resolve MESSAGE_ID --by NAME} closes one after the message was delivered or
 * discarded by hand. Exit 0 on success, 1 when the database fails, 2 on bad options, 3 when the
 * message has no open ticket.
 */
@Command(name = "txn", description = "Producer tickets (check-backs past the log retention): list them with age and reason, resolve one.", subcommands = {
    TxnCommand.Tickets.class, TxnCommand.Resolve.class, HelpCommand.class})
public final class TxnCommand extends CommandGroup {

  /** {@code converge txn tickets}. */
  @Command(name = "tickets", description = "Lists open producer tickets, oldest first.")
  static final class Tickets extends DbListCommand<TxnTickets.Ticket> {

    Tickets() {
      super("open producer tickets", rows(TxnTickets::on, TxnTickets::openCount, TxnTickets::open),
          "%-36s message id|%-20s group|%-24s topic|%-26s kind|%6s checks|%10s age|%s reason",
          (t, now) -> new Object[]{t.messageId(), t.group(), t.topic(), t.kind(), t.checks(),
              age(t.createdAt(), now), t.reason()});
    }
  }

  /** {@code converge txn resolve MESSAGE_ID --by NAME [--note TEXT]}. */
  @Command(name = "resolve", description = "Closes the open producer ticket of a message (after delivering or discarding it by hand).")
  static final class Resolve extends DbResolveCommand {

    @Parameters(index = "0", paramLabel = "MESSAGE_ID", description = "the ticket's message id (from txn tickets)")
    String messageId;

    @Override
    protected String act(DataSource dataSource) {
      return TxnTickets.on(dataSource).resolve(messageId, by, note) ? "resolved the ticket of message " + messageId
          : null;
    }

    @Override
    protected String nothingToDo() {
      return "message " + messageId + " has no open ticket";
    }
  }
}
