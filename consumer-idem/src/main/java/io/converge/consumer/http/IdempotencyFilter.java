package io.converge.consumer.http;

import jakarta.servlet.Filter;

/**
 * A Servlet filter giving HTTP endpoints Stripe's {@code Idempotency-Key} semantics (status codes of
 * the IETF draft), scoped per tenant and stored in {@code converge_idempotency_key}:
 *
 * <ul>
 *   <li>the first request with a key claims it in its own short transaction, runs the handler, and
 *       stores the response (status, whitelisted headers, body) in a second one before the client sees it;
 *   <li>a retry within the TTL gets that response again, 4xx and 5xx included, with
 *       {@code Idempotent-Replayed: true}; the handler does not run;
 *   <li>the same key with another method, path or canonical body: 422; while the first runs: 409 with
 *       {@code Retry-After}; a missing key on a required endpoint, or a malformed one: 400;
 *   <li>a running handler's lease is renewed every third of the lease; a claim whose process died is
 *       taken over once its lease expires.
 * </ul>
 *
 * Requests that match no {@link IdempotentEndpoint} pass through untouched. Build one with
 * {@link #builder()}; thread-safe. Handlers must be synchronous: servlet async is refused on a
 * protected request (the handler fails with a stored 500).
 */
public interface IdempotencyFilter extends Filter {

  /**
   * The request attribute that holds, while the handler runs, the request's Idempotency-Key as the filter keys it (a
   * structured-field string's quotes removed: {@code "abc"} and {@code abc} are one key), for a handler that records
   * the key with its work so that a client can later look the work up by it.
   */
  String KEY_ATTRIBUTE = "io.converge.idempotency.key";

  /** A builder; {@code dataSource}, {@code tenantResolver} and the endpoints are required. */
  static IdempotencyFilterBuilder builder() {
    return new IdempotencyFilterBuilder();
  }
}
