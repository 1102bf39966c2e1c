package io.converge.broker;

/**
 * An embedded server could not be started, stopped or reached. The message names the server and the
 * thing at fault (a port, a directory, a URL), so that it can be acted on without reading a stack of
 * nested causes.
 */
public class EmbeddedServerException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** An error with its cause. */
  public EmbeddedServerException(String message, Throwable cause) {
    super(message, cause);
  }

  /** An error without a cause. */
  public EmbeddedServerException(String message) {
    super(message);
  }
}
