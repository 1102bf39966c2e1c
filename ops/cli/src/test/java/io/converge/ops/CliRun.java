package io.converge.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/**
 * One run of the {@code converge} command line in this JVM.
 *
 * @param status the exit status
 * @param out what it printed to stdout
 * @param err what it printed to stderr
 */
public record CliRun(int status, String out, String err) {

  /** Runs {@code converge args...}. */
  public static CliRun of(String... args) {
    StringWriter o = new StringWriter();
    StringWriter e = new StringWriter();
    CommandLine cli = ConvergeCli.commandLine();
    cli.setOut(new PrintWriter(o, true));
    cli.setErr(new PrintWriter(e, true));
    int status = cli.execute(args);
    return new CliRun(status, o.toString(), e.toString());
  }

  /** Asserts that this run exited with {@code status} and printed {@code message} on stderr. */
  public void assertFails(int status, String message) {
    assertThat(status()).as(err).isEqualTo(status);
    assertThat(err).contains(message);
  }
}
