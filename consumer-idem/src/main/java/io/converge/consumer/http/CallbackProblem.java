package io.converge.consumer.http;

/**
 * Every answer the signed-callback filter gives instead of running the handler, as an
 * {@code application/problem+json} body (RFC 9457) whose {@code type} is {@link #type()}. A replayed callback is not
 * among them: it gets the first callback's stored answer (see {@link SignedCallbackFilter}).
 */
public enum CallbackProblem implements HttpProblem {

  /** The request has no signature header. */
  SIGNATURE_MISSING(400, "signature-missing", "The callback's signature header is missing"),
  /** The signature header is not {@code t=<unix seconds>,v1=<64 hex>[,v1=…]}, or is sent more than once. */
  SIGNATURE_MALFORMED(400, "signature-malformed", "The callback's signature header is malformed"),
  /** The signature's timestamp is further than the tolerance from the server's clock, in either direction. */
  TIMESTAMP_OUT_OF_TOLERANCE(400, "timestamp-out-of-tolerance",
      "The callback's timestamp is outside the tolerance"),
  /** No {@code v1} signature of the header matches the body under any active secret. */
  SIGNATURE_MISMATCH(401, "signature-mismatch", "The callback's signature does not match"),
  /** The body is larger than {@code converge.callback.max-body-size}; it was not read beyond the limit. */
  BODY_TOO_LARGE(413, "body-too-large", "The callback's body is too large"),
  /** The secrets provider failed or returned no secret: nothing can be verified, nothing was run. */
  SECRETS_UNAVAILABLE(503, "secrets-unavailable", "The callback's secrets are unavailable");

  private static final String TYPE_PREFIX = "urn:converge:callback:";

  private final Spec spec;

  CallbackProblem(int status, String code, String title) {
    this.spec = new Spec(TYPE_PREFIX, status, code, title);
  }

  @Override
  public Spec spec() {
    return spec;
  }
}
