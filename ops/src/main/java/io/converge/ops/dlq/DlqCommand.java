package io.converge.ops.dlq;

import io.converge.consumer.ConsumerOps;
import io.converge.ops.db.CommandGroup;
import io.converge.ops.db.DbCommand;
import io.converge.ops.db.DbListCommand;
import io.converge.ops.outbox.OutboxCommand;
import java.io.PrintWriter;
import java.time.Duration;
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
@Command(
    name = "dlq",
    mixinStandardHelpOptions = true,
    description = "Consumers' dead letters and tickets: list them with age and reason, discard or resolve one.",
    subcommands = {DlqCommand.ListParked.class, DlqCommand.Discard.class, DlqCommand.Tickets.class, DlqCommand.Resolve.class,
        CommandLine.HelpCommand.class})
public final class DlqCommand extends CommandGroup {

  /** {@code converge dlq list}. */
  @Command(name = "list", mixinStandardHelpOptions = true, description = "Lists parked dead letters, oldest first.")
  static final class ListParked extends DbListCommand {
    @Override
    protected String name() {
      return "dlq list";
    }

    @Override
    protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      ConsumerOps ops = ConsumerOps.of(dataSource);
      long total = ops.countParked();
      List<ConsumerOps.DeadLetter> rows = ops.parked(limit);
      out.printf("%d dead letters%s%n", total, total > rows.size() ? " (oldest " + rows.size() + " shown)" : "");
      if (!rows.isEmpty()) {
        out.printf("%8s %-12s %-24s %-24s %-36s %8s %10s  %s%n", "id", "tenant", "group", "topic", "message id", "attempts",
            "age", "reason");
      }
      for (ConsumerOps.DeadLetter d : rows) {
        out.printf("%8d %-12s %-24s %-24s %-36s %8d %10s  %s: %s%n", d.id(), d.tenant(), d.group(), d.topic(),
            d.messageId() == null ? "(none)" : d.messageId(), d.attempts(), age(d.age()), d.reasonCode(),
            d.reason() == null ? "" : d.reason());
      }
      return 0;
    }
  }

  /** {@code converge dlq discard ID}. */
  @Command(name = "discard", mixinStandardHelpOptions = true, description = "Discards a parked dead letter (it is not processed).")
  static final class Discard extends DbCommand {
    @Parameters(index = "0", paramLabel = "ID", description = "the dead letter's id (from dlq list)")
    long id;

    @Override
    protected String name() {
      return "dlq discard";
    }

    @Override
    protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      ConsumerOps ops = ConsumerOps.of(dataSource);
      if (!ops.discard(id)) {
        err.println("dlq discard: dead letter " + id + " is not parked");
        return 3;
      }
      out.printf("discarded dead letter %d%n", id);
      return 0;
    }
  }

  /** {@code converge dlq tickets}. */
  @Command(name = "tickets", mixinStandardHelpOptions = true, description = "Lists open tickets, oldest first.")
  static final class Tickets extends DbListCommand {
    @Override
    protected String name() {
      return "dlq tickets";
    }

    @Override
    protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      ConsumerOps ops = ConsumerOps.of(dataSource);
      List<ConsumerOps.Ticket> rows = ops.openTickets(limit);
      out.printf("%d open tickets shown%n", rows.size());
      if (!rows.isEmpty()) {
        out.printf("%8s %-10s %-12s %-24s %-36s %8s %10s  %s%n", "id", "kind", "tenant", "group", "message id", "dlq id", "age",
            "reason");
      }
      for (ConsumerOps.Ticket t : rows) {
        out.printf("%8d %-10s %-12s %-24s %-36s %8s %10s  %s%n", t.id(), t.kind(), t.tenant(), t.group(),
            t.messageId() == null ? "(none)" : t.messageId(), t.dlqId() == null ? "-" : t.dlqId().toString(), age(t.age()),
            t.reason() == null ? "" : t.reason());
      }
      return 0;
    }
  }

  /** {@code converge dlq resolve ID --by NAME [--note TEXT]}. */
  @Command(name = "resolve", mixinStandardHelpOptions = true, description = "Closes an open ticket.")
  static final class Resolve extends DbCommand {
    @Parameters(index = "0", paramLabel = "ID", description = "the ticket's id (from dlq tickets)")
    long id;

    @Option(names = "--by", required = true, description = "who resolved it")
    String by;

    @Option(names = "--note", description = "what was done")
    String note;

    @Override
    protected String name() {
      return "dlq resolve";
    }

    @Override
    protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      ConsumerOps ops = ConsumerOps.of(dataSource);
      if (!ops.resolveTicket(id, by, note)) {
        err.println("dlq resolve: ticket " + id + " is not open");
        return 3;
      }
      out.printf("resolved ticket %d%n", id);
      return 0;
    }
  }

  private static String age(Duration d) {
    return OutboxCommand.age(java.time.Instant.EPOCH, java.time.Instant.EPOCH.plus(d));
  }
}
