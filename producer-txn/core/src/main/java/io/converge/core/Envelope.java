package io.converge.core;

/**
 * The names of the headers (RocketMQ user properties, Pulsar message properties) that every message
 * published by Converge carries, whatever the backend. They are a public contract: a producer that is
 * not Converge's can set them to get deduplication by {@code @IdempotentConsumer}.
 *
 * <p>Names use only lower-case ASCII letters, digits and '-', which every supported broker accepts as
 * a property name.
 */
public final class Envelope {

  /** The message id: a time-ordered UUID (version 7), unique per message, stable across redeliveries. */
  public static final String MESSAGE_ID = "converge-message-id";
  /** The key (aggregate id): selects the queue/partition so that one key keeps its order. */
  public static final String KEY = "converge-key";
  /** The tenant the message belongs to; {@value #DEFAULT_TENANT} when none is set. */
  public static final String TENANT = "converge-tenant";
  /** The producing service (the producer's group by default). */
  public static final String SOURCE = "converge-source";
  /** The creation time, epoch milliseconds, as decimal text. */
  public static final String CREATED_AT = "converge-created-at";
  /** W3C trace context, set when a trace is active. */
  public static final String TRACEPARENT = "traceparent";
  /**
   * The HMAC-SHA256 signature of the message, {@code v1:<key id>:<64 lower-case hex digits>}, set when the producer
   * signs ({@link MessageSignature} defines what it covers).
   */
  public static final String SIGNATURE = "converge-signature";
  /** The payload's schema, {@code <type>/<major>.<minor>} ({@link SchemaVersion}), set when the message names one. */
  public static final String SCHEMA = "converge-schema";

  /** The tenant of a message that names none. */
  public static final String DEFAULT_TENANT = "default";

  private Envelope() {
  }
}
