package io.converge.broker.pulsar;

import io.converge.broker.EmbeddedServerException;
import java.nio.file.Path;

/**
 * The embedded Pulsar child JVM exited or timed out before it was ready. The message and
 * {@link #logTail()} hold the last lines of its log; the whole log stays at {@link #logFile()} (the
 * data directory is kept after a failed start, even a temporary one).
 */
public final class PulsarStartException extends EmbeddedServerException {

  private static final long serialVersionUID = 1L;

  private final transient Path logFile;
  private final String logTail;

  PulsarStartException(String reason, Path logFile, String logTail, Throwable cause) {
    super("Embedded Pulsar " + reason + "; full log: " + logFile + "; its last lines:\n" + logTail, cause);
    this.logFile = logFile;
    this.logTail = logTail;
  }

  /** The child's log (its stderr), never null. */
  public Path logFile() {
    return logFile;
  }

  /** The last lines of the child's log, never null (empty if it wrote nothing). */
  public String logTail() {
    return logTail;
  }
}
