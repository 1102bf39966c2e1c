package io.converge.saga.tcc;

import java.util.Objects;

/**
 * What {@link TccBarrier#run} did, and the branch's result: the body's bytes for {@link TccOutcome#RAN}, the stored
 * ones for {@link TccOutcome#DUPLICATE}, empty for {@link TccOutcome#EMPTY_ROLLBACK} and
 * {@link TccOutcome#HANGING_REFUSED}. Immutable apart from the array, which callers must not modify.
 *
 * @param outcome never null
 * @param result never null, may be empty
 */
public record TccResult(TccOutcome outcome, byte[] result) {

  /** Rejects nulls. */
  public TccResult {
    Objects.requireNonNull(outcome, "outcome");
    Objects.requireNonNull(result, "result");
  }
}
