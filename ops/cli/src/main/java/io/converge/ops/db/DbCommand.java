package io.converge.ops.db;

import io.converge.core.ConvergeException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A {@code converge} command on Converge's tables: the database options, the checks of the options
 * (exit 2), the database failure (exit 1, the error printed as {@code <name> failed: …}), the standard
 * help options.
 */
@Command(mixinStandardHelpOptions = true)
public abstract class DbCommand implements Callable<Integer> {

  /** This command's picocli model. */
  @Spec
  protected CommandSpec spec;

  /** The database options. */
  @Mixin
  protected DbOptions db;

  /** The command's name in messages: its names below {@code converge}, e.g. {@code outbox parked}. */
  protected final String name() {
    String qualified = spec.qualifiedName(" ");
    return qualified.substring(qualified.indexOf(' ') + 1);
  }

  /** Runs the command on {@code dataSource}; returns its exit status. */
  protected abstract int run(DataSource dataSource, PrintWriter out, PrintWriter err);

  /**
   * Thrown by {@link #run} when the options, though valid, do not say which row to act on (e.g. a key
   * parked for two tenants): exit 2 with the message, nothing changed.
   */
  protected static final class Underspecified extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** What the options leave open and how to say it; {@code cause} is the store's refusal. */
    public Underspecified(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** Null when the options are valid, else what is wrong. */
  protected String problem() {
    return db.problem();
  }

  @Override
  public final Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    String problem = problem();
    if (problem != null) {
      err.println(name() + ": " + problem);
      return 2;
    }
    try {
      return run(db.dataSource(), spec.commandLine().getOut(), err);
    } catch (Underspecified e) {
      err.println(name() + ": " + e.getMessage());
      return 2;
    } catch (ConvergeException e) {
      err.println(name() + " failed: " + DbOptions.describe(e));
      return 1;
    }
  }
}
