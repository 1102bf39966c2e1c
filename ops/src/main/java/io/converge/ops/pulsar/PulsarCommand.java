package io.converge.ops.pulsar;

import io.converge.ops.db.CommandGroup;
import io.converge.ops.db.DbCommand;
import io.converge.ops.db.DbListCommand;
import io.converge.ops.outbox.OutboxCommand;
import io.converge.pulsar.PulsarTxns;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code converge pulsar}: the Pulsar transactions that recovery parked because Pulsar refused their
 * re-publish (topic terminated, not authorized, message too large), with age and reason, and resuming
 * one once the cause is fixed. Exit 0 on success, 1 when the database fails, 2 on bad options, 3 when
 * the transaction is not parked.
 */
@Command(
    name = "pulsar",
    mixinStandardHelpOptions = true,
    description = "Parked Pulsar transactions: list them with age and reason, resume one.",
    subcommands = {PulsarCommand.Parked.class, PulsarCommand.Resume.class, CommandLine.HelpCommand.class})
public final class PulsarCommand extends CommandGroup {

  private static final Pattern TXN_ID = Pattern.compile("\\(?(-?\\d+),(-?\\d+)\\)?");

  /** {@code converge pulsar parked}. */
  @Command(name = "parked", mixinStandardHelpOptions = true, description = "Lists parked Pulsar transactions, longest parked first.")
  static final class Parked extends DbListCommand {
    @Override
    protected String name() {
      return "pulsar parked";
    }

    @Override
    protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      PulsarTxns txns = PulsarTxns.on(dataSource);
      long total = txns.parkedCount();
      List<PulsarTxns.Parked> rows = txns.parked(limit);
      out.printf("%d parked Pulsar transactions%s%n", total, total > rows.size() ? " (oldest " + rows.size() + " shown)" : "");
      if (!rows.isEmpty()) {
        out.printf("%-28s %-20s %8s %8s %12s  %s%n", "transaction", "group", "messages", "attempts", "parked for", "reason");
      }
      Instant now = Instant.now();
      for (PulsarTxns.Parked p : rows) {
        out.printf("%-28s %-20s %8d %8d %12s  %s%n", p.id(), p.group(), p.messages(), p.attempts(),
            OutboxCommand.age(p.parkedAt(), now), p.reason() == null ? "" : p.reason());
      }
      return 0;
    }
  }

  /** {@code converge pulsar resume ID}. */
  @Command(name = "resume", mixinStandardHelpOptions = true,
      description = "Resumes a parked Pulsar transaction: the next recovery scan of its group re-publishes it.")
  static final class Resume extends DbCommand {
    @Parameters(index = "0", paramLabel = "ID", description = "the transaction id as listed, (most,least)")
    String id;

    @Override
    protected String name() {
      return "pulsar resume";
    }

    @Override
    protected String problem() {
      if (!TXN_ID.matcher(id).matches()) {
        return "ID must be (most,least), but was " + id;
      }
      return super.problem();
    }

    @Override
    protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      Matcher m = TXN_ID.matcher(id);
      m.matches();
      if (!PulsarTxns.on(dataSource).resume(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)))) {
        err.println("pulsar resume: transaction " + id + " is not parked");
        return 3;
      }
      out.printf("resumed Pulsar transaction %s: the next recovery scan of its group re-publishes it%n", id);
      return 0;
    }
  }
}
