package io.converge.consumer.http;

import io.converge.core.ConvergeException;

/**
 * A callback the signed-callback filter refuses; the filter turns it into the {@link CallbackProblem}'s problem
 * response. Its message says what was wrong (the header's text quoted, never a secret).
 */
public class CallbackException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final CallbackProblem problem;

  /** A refusal of {@code problem}, {@code detail} saying why. */
  public CallbackException(CallbackProblem problem, String detail) {
    this(problem, detail, null);
  }

  /** A refusal of {@code problem} caused by {@code cause}. */
  public CallbackException(CallbackProblem problem, String detail, Throwable cause) {
    super(detail, cause);
    this.problem = problem;
  }

  /** What went wrong, with its status and problem type. */
  public CallbackProblem problem() {
    return problem;
  }
}
