package io.converge.saga;

import java.util.Map;
import java.util.Objects;

/**
 * A participant's reply to one command, as a {@link ReplyClassifier} and a step's reply handler see it.
 * Immutable apart from the payload array, which callers must not modify.
 *
 * @param outcome the {@link SagaHeaders#OUTCOME} header (a {@link ReplyClass} name when the participant is a
 *     {@link SagaParticipant}), or null
 * @param headers every header of the reply message, unmodifiable
 * @param payload the reply's body (JSON by convention), never null
 */
public record SagaReply(String outcome, Map<String, String> headers, byte[] payload) {

  /** Copies the headers; rejects nulls. */
  public SagaReply {
    headers = Map.copyOf(Objects.requireNonNull(headers, "headers"));
    Objects.requireNonNull(payload, "payload");
  }
}
