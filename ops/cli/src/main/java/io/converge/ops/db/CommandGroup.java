package io.converge.ops.db;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A {@code converge} command that only groups subcommands: run alone, it prints its usage and exits 2.
 * It has the standard help options.
 */
@Command(mixinStandardHelpOptions = true)
public abstract class CommandGroup implements Callable<Integer> {

  @Spec
  CommandSpec spec;

  @Override
  public final Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return 2;
  }
}
