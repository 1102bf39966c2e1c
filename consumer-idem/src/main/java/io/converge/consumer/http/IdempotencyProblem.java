package io.converge.consumer.http;

/**
 * Every answer the Idempotency-Key filter gives instead of running the handler, as an
 * {@code application/problem+json} body (RFC 9457) whose {@code type} is {@link #type()}. The status
 * codes follow the IETF draft {@code draft-ietf-httpapi-idempotency-key-header}.
 */
public enum IdempotencyProblem implements HttpProblem {

  /** The endpoint requires an {@code Idempotency-Key} and the request has none. */
  KEY_MISSING(400, "key-missing", "Idempotency-Key header is required on this endpoint"),
  /** The key is empty, longer than 255 characters or not printable ASCII. */
  KEY_INVALID(400, "key-invalid", "Idempotency-Key header is malformed"),
  /** The tenant resolver found no tenant, or one that is not 1..64 printable ASCII characters. */
  TENANT_INVALID(400, "tenant-invalid", "The request's tenant is missing or malformed"),
  /** A JSON request body does not parse. */
  BODY_INVALID(400, "body-invalid", "The request body is not valid JSON"),
  /** The request body is larger than the configured maximum. */
  BODY_TOO_LARGE(413, "body-too-large", "The request body is too large to fingerprint"),
  /** The key was first used with another method, path or body. */
  KEY_REUSED(422, "key-reused", "Idempotency-Key was already used with a different request"),
  /** The first request with this key is still being processed. */
  IN_PROGRESS(409, "in-progress", "A request with this Idempotency-Key is still being processed"),
  /**
   * The first request with this key did its work (its database transaction committed) but its answer was lost (it
   * could not be stored, or its process died right after the commit). The handler is never run again for the key:
   * this answer is stored and replayed for the key's TTL. A 409, not a 5xx: the request must not be retried with a
   * new key (that would do the work twice); the client looks the outcome up (e.g. lists its orders) instead.
   */
  ANSWER_LOST(409, "answer-lost",
      "The request was carried out but its response was lost; do not retry it with a new Idempotency-Key"),
  /**
   * The first request with this key was carried out, but its response was larger than
   * {@code converge.idempotency.max-response-size}: it was sent to that request's client and not stored. This answer
   * is stored and replayed for the key's TTL instead; the handler is never run again for the key. A 409: the request
   * must not be retried with a new key; the client looks the outcome up instead.
   */
  ANSWER_NOT_STORED(409, "answer-not-stored",
      "The request was carried out but its response was too large to be stored; do not retry it with a new "
          + "Idempotency-Key"),
  /** The handler threw instead of answering; this answer is stored and replayed like any other. */
  HANDLER_FAILED(500, "handler-failed", "The request failed on the server"),
  /**
   * The handler failed because something it needed was unavailable (see
   * {@link io.converge.consumer.Unavailability}): its work was rolled back, the key was released, and a
   * retry with the same key runs the handler. Never stored.
   */
  HANDLER_UNAVAILABLE(503, "handler-unavailable", "A service the request needs is unavailable; nothing was done"),
  /**
   * A commit of the handler failed with an unknown outcome (the connection broke during {@code COMMIT}): its work may
   * have committed. Never stored, the key is not released: it stays claimed until its lease is over
   * ({@code Retry-After}), then a retry with the same key gets {@link #ANSWER_LOST} if the work committed, or runs the
   * handler if it did not.
   */
  OUTCOME_UNKNOWN(503, "outcome-unknown",
      "The request's outcome is not known yet; retry it with the same Idempotency-Key after Retry-After"),
  /** The key store (the database) could not be reached; nothing was claimed, retrying is safe. */
  STORE_UNAVAILABLE(503, "store-unavailable", "The idempotency key store is unavailable");

  private static final String TYPE_PREFIX = "urn:converge:idempotency:";

  private final Spec spec;

  IdempotencyProblem(int status, String code, String title) {
    this.spec = new Spec(TYPE_PREFIX, status, code, title);
  }

  @Override
  public Spec spec() {
    return spec;
  }
}
