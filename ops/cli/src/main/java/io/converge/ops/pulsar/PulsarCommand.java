package io.converge.ops.pulsar;

import io.converge.ops.db.CommandGroup;
import io.converge.ops.db.DbActionCommand;
import io.converge.ops.db.DbListCommand;
import io.converge.pulsar.PulsarTxns;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Parameters;

/**
 * {@code converge pulsar}: the Pulsar transactions that recovery parked because Pulsar refused their
 * re-publish (topic terminated, not authorized, message too large), with age and reason, and resuming
 * one once the cause is fixed. Exit 0 on success, 1 when the database fails, 2 on bad options, 3 when
 * the transaction is not parked.
 */
@Command(name = "pulsar", description = "Parked Pulsar transactions: list them with age and reason, resume one.", subcommands = {
    PulsarCommand.Parked.class, PulsarCommand.Resume.class, HelpCommand.class})
public final class PulsarCommand extends CommandGroup {

  private static final Pattern TXN_ID = Pattern.compile("\\(?(-?\\d+),(-?\\d+)\\)?");

  /** {@code converge pulsar parked}. */
  @Command(name = "parked", description = "Lists parked Pulsar transactions, longest parked first.")
  static final class Parked extends DbListCommand<PulsarTxns.Parked> {

    Parked() {
      super("parked Pulsar transactions",
          rows(PulsarTxns::on, PulsarTxns::parkedCount, PulsarTxns::parked),
          "%-28s transaction|%-20s group|%8s messages|%8s attempts|%12s parked for|%s reason",
          (p, now) -> new Object[]{p.id(), p.group(), p.messages(), p.attempts(), age(p.parkedAt(), now),
              orEmpty(p.reason())});
    }
  }

  /** {@code converge pulsar resume ID}. */
  @Command(name = "resume", description = "Resumes a parked Pulsar transaction: the next recovery scan of its group re-publishes it.")
  static final class Resume extends DbActionCommand {

    @Parameters(index = "0", paramLabel = "ID", description = "the transaction id as listed, (most,least)")
    String id;

    @Override
    protected String problem() {
      if (!TXN_ID.matcher(id).matches()) {
        return "ID must be (most,least), but was " + id;
      }
      return super.problem();
    }

    @Override
    protected String act(DataSource dataSource) {
      Matcher m = TXN_ID.matcher(id);
      m.matches();
      return PulsarTxns.on(dataSource).resume(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)))
          ? "resumed Pulsar transaction " + id + ": the next recovery scan of its group re-publishes it"
          : null;
    }

    @Override
    protected String nothingToDo() {
      return "transaction " + id + " is not parked";
    }
  }
}
