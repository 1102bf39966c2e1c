package io.converge.consumer.http;

/**
 * Receives what the signed-callback filter counts, per endpoint (its {@code METHOD pattern}). Implementations are
 * thread-safe and must not throw.
 */
public interface CallbackMetrics {

  /** A callback's signature and timestamp verified; it goes on to the Idempotency-Key store and the handler. */
  void verified(String endpoint);

  /** A callback was refused for {@code problem} (one count per refusal, the problem's code as its reason). */
  void refused(String endpoint, CallbackProblem problem);

  /** A verified callback was a replay: it got the first callback's stored answer, the handler did not run. */
  default void replayed(String endpoint) {
  }

  /** Counts nothing. */
  CallbackMetrics NONE = new CallbackMetrics() {

    @Override
    public void verified(String endpoint) {
    }

    @Override
    public void refused(String endpoint, CallbackProblem problem) {
    }
  };
}
