package io.converge.ops;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** One run of the {@code converge} command line in this JVM: its exit status, stdout and stderr. */
public final class CliRun {

  /** The exit status. */
  public final int status;
  /** What it printed to stdout. */
  public final String out;
  /** What it printed to stderr. */
  public final String err;

  private CliRun(int status, String out, String err) {
    this.status = status;
    this.out = out;
    this.err = err;
  }

  /** Runs {@code converge args...}. */
  public static CliRun of(String... args) {
    StringWriter o = new StringWriter();
    StringWriter e = new StringWriter();
    CommandLine cli = new CommandLine(new ConvergeCli());
    cli.setOut(new PrintWriter(o, true));
    cli.setErr(new PrintWriter(e, true));
    int status = cli.execute(args);
    return new CliRun(status, o.toString(), e.toString());
  }
}
