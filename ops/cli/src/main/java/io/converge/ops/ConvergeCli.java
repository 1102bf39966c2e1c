package io.converge.ops;

import io.converge.ops.console.ConsoleCommand;
import io.converge.ops.dlq.DlqCommand;
import io.converge.ops.doctor.DoctorCommand;
import io.converge.ops.outbox.OutboxCommand;
import io.converge.ops.pulsar.PulsarCommand;
import io.converge.ops.purge.PurgeCommand;
import io.converge.ops.saga.SagaCommand;
import io.converge.ops.trace.TraceCommand;
import io.converge.ops.txn.TxnCommand;
import java.util.ServiceLoader;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code converge} command line for the platform team. The production commands (this module) work on the
 * database alone; {@code dev} and {@code bench} come from {@code converge-ops} (the distribution's
 * {@code lib/dev/}) through {@link ConvergeCommands} when it is on the classpath.
 */
@Command(name = "converge", mixinStandardHelpOptions = true, version = "converge 0.1.0", description = "Operate Converge: outbox purge, parked outbox keys, dead letters and tickets, producer tickets, parked Pulsar transactions, sagas; the dev platform and benchmarks with lib/dev.", footer = "dev and bench (embedded servers, benchmarks) are listed when lib/dev/ is present: bin/converge adds it for them only.", subcommands = {
    PurgeCommand.class, OutboxCommand.class, DlqCommand.class, TxnCommand.class, PulsarCommand.class,
    SagaCommand.class, ConsoleCommand.class, TraceCommand.class, DoctorCommand.class, CommandLine.HelpCommand.class})
public final class ConvergeCli {

  /** The commands of {@code converge-ops}, named when they are missing. */
  private static final Set<String> DEV_COMMANDS = Set.of("dev", "bench", "chaos");

  /** Runs the command line and exits with its status. */
  public static void main(String[] args) {
    CommandLine cli = commandLine();
    if (args.length > 0 && DEV_COMMANDS.contains(args[0]) && !cli.getSubcommands().containsKey(args[0])) {
      cli.getErr().println("converge " + args[0] + " needs lib/dev/ (embedded servers): run it from the full "
          + "distribution (mvn -B -DskipTests -pl ops -am package, then ops/target/converge/bin/converge)");
      System.exit(2);
    }
    System.exit(cli.execute(args));
  }

  /** The command line: the production commands and those of every {@link ConvergeCommands} on the classpath. */
  public static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new ConvergeCli());
    for (ConvergeCommands more : ServiceLoader.load(ConvergeCommands.class)) {
      for (Object command : more.commands()) {
        cli.addSubcommand(command);
      }
    }
    return cli;
  }
}
