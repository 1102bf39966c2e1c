package io.converge.consumer.http;

import io.converge.core.ConvergeException;

/**
 * A request the Idempotency-Key filter refuses or cannot serve; the filter turns it into the
 * {@link IdempotencyProblem}'s problem response. Carries the tenant and key when they are known
 * (null before they are resolved).
 */
public class IdempotencyException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final IdempotencyProblem problem;
  private final String tenant;
  private final String key;

  /** A refusal of {@code problem} for {@code key} of {@code tenant} (both nullable). */
  public IdempotencyException(IdempotencyProblem problem, String detail, String tenant, String key, Throwable cause) {
    super(detail, cause);
    this.problem = problem;
    this.tenant = tenant;
    this.key = key;
  }

  /** A refusal not yet tied to a tenant or key. */
  public IdempotencyException(IdempotencyProblem problem, String detail) {
    this(problem, detail, null, null, null);
  }

  /** What went wrong, with its status and problem type. */
  public IdempotencyProblem problem() {
    return problem;
  }

  /** The tenant, or null when not resolved yet. */
  public String tenant() {
    return tenant;
  }

  /** The Idempotency-Key, or null when not read yet. */
  public String key() {
    return key;
  }
}
