package io.converge.ops;

import io.converge.ops.bench.BenchCommand;
import io.converge.ops.dlq.DlqCommand;
import io.converge.ops.outbox.OutboxCommand;
import io.converge.ops.pulsar.PulsarCommand;
import io.converge.ops.purge.PurgeCommand;
import io.converge.ops.txn.TxnCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code converge} command line for the platform team. */
@Command(name = "converge", mixinStandardHelpOptions = true, version = "converge 0.1.0", description = "Operate Converge: the dev platform, benchmarks, outbox purge, parked outbox keys, dead letters and tickets, producer tickets.", subcommands = {
    BenchCommand.class, DevCommand.class, PurgeCommand.class, OutboxCommand.class, DlqCommand.class, TxnCommand.class,
    PulsarCommand.class,
    CommandLine.HelpCommand.class})
public final class ConvergeCli {

  /** Runs the command line and exits with its status. */
  public static void main(String[] args) {
    int status = new CommandLine(new ConvergeCli()).execute(args);
    System.exit(status);
  }
}
