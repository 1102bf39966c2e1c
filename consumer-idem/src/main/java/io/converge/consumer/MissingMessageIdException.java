package io.converge.consumer;

import io.converge.core.ConvergeException;

/**
 * A message arrived without a usable id: no {@code converge-message-id} header and no configured
 * fallback yielded a valid one. Such a message cannot be deduplicated, so it is never processed:
 * it is parked in {@code converge_dlq} with reason {@code MISSING_MESSAGE_ID}.
 */
public class MissingMessageIdException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final String topic;
  private final String brokerMessageId;

  /** The message on {@code topic} whose broker id is {@code brokerMessageId} (may be null). */
  public MissingMessageIdException(String topic, String brokerMessageId, String why) {
    super("Message " + brokerMessageId + " on topic " + topic + " has no usable message id: " + why);
    this.topic = topic;
    this.brokerMessageId = brokerMessageId;
  }

  /** The topic of the message. */
  public String topic() {
    return topic;
  }

  /** The broker's id of the message, or null. */
  public String brokerMessageId() {
    return brokerMessageId;
  }
}
