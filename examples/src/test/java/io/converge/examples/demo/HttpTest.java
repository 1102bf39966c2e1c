package io.converge.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.consumer.http.IdempotencyProblem;
import org.junit.jupiter.api.Test;

/** Which answers the demo's HTTP client retries (the same request again, same Idempotency-Key). */
class HttpTest {

  private static final String IN_PROGRESS = IdempotencyProblem.IN_PROGRESS.type();
  private static final String ANSWER_LOST = IdempotencyProblem.ANSWER_LOST.type();

  @Test
  void aKeyedRequestIsRetriedOn409InProgressOnly() {
    assertThat(Http.retryable(409, IN_PROGRESS, true, true)).isTrue();
    // the filter answers every retry of a key whose answer a crash took 409 answer-lost, for good: final
    assertThat(Http.retryable(409, ANSWER_LOST, true, true)).isFalse();
    assertThat(Http.retryable(409, "urn:example:not-refundable", true, true)).isFalse();
    assertThat(Http.retryable(409, null, true, true)).isFalse();
  }

  @Test
  void a409IsNotRetriedWhenTheCallerCountsThem() {
    assertThat(Http.retryable(409, IN_PROGRESS, true, false)).isFalse();
    assertThat(Http.retryable(409, ANSWER_LOST, false, false)).isFalse();
  }

  @Test
  void unavailableAnswersAreRetriedAndAStoredVerdictIsNot() {
    assertThat(Http.retryable(503, IdempotencyProblem.STORE_UNAVAILABLE.type(), true, true)).isTrue();
    assertThat(Http.retryable(502, null, true, false)).isTrue();
    assertThat(Http.retryable(504, null, false, false)).isTrue();
    assertThat(Http.retryable(500, IdempotencyProblem.HANDLER_FAILED.type(), true, true)).isFalse();
    assertThat(Http.retryable(500, null, false, false)).isTrue();
    assertThat(Http.retryable(200, null, true, true)).isFalse();
    assertThat(Http.retryable(422, IdempotencyProblem.KEY_REUSED.type(), true, true)).isFalse();
  }
}
