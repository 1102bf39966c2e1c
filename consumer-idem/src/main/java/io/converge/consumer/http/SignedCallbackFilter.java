package io.converge.consumer.http;

import io.converge.consumer.http.internal.CallbackSignature;
import jakarta.servlet.Filter;

/**
 * A Servlet filter verifying inbound callbacks (a payment provider's notifications) signed in the common
 * {@code t=<unix seconds>,v1=<hex>} form (Stripe's scheme): {@code v1} is the lower-case hex HMAC-SHA256, keyed with a
 * shared secret, of the signed text {@code <t>.<raw body>}; several {@code v1} entries may be sent (secret rotation),
 * one matching any active secret ({@link CallbackSecrets}) is enough; other entries ({@code v0}, …) are ignored.
 *
 * <ul>
 *   <li>no signature header: 400 {@link CallbackProblem#SIGNATURE_MISSING}; a malformed one (or one sent twice): 400
 *       {@link CallbackProblem#SIGNATURE_MALFORMED}, the detail quoting what was wrong;
 *   <li>no {@code v1} entry matches: 401 {@link CallbackProblem#SIGNATURE_MISMATCH};
 *   <li>a matching signature whose {@code t} is further than the tolerance from the server's clock, either way: 400
 *       {@link CallbackProblem#TIMESTAMP_OUT_OF_TOLERANCE};
 *   <li>a body over the limit: 413 {@link CallbackProblem#BODY_TOO_LARGE}, never read beyond it;
 *   <li>a verified callback runs through the Idempotency-Key filter's store ({@code converge_idempotency_key}), keyed
 *       by the SHA-256 of its signed text under the tenant {@code callback:<provider>}: the handler runs once, and a
 *       copy of the callback within the replay window gets the first answer again (status, headers, body, with
 *       {@code Idempotent-Replayed: true}) without running it. A copy sent to another path gets 422
 *       {@code key-reused}; one sent while the first runs, 409 {@code in-progress}.
 * </ul>
 *
 * The body is read once, up to the limit, and handed on to the handler re-readable. Requests that match no endpoint
 * pass through untouched. Build one with {@link #builder()}; thread-safe. Handlers must be synchronous, as behind the
 * Idempotency-Key filter. Every refusal is logged (warn, with its reason) and counted ({@link CallbackMetrics}).
 */
public interface SignedCallbackFilter extends Filter {

  /** A builder; {@code dataSource}, {@code provider}, {@code secrets} and the endpoints are required. */
  static SignedCallbackFilterBuilder builder() {
    return new SignedCallbackFilterBuilder();
  }

  /**
   * The signature header's value a payment provider sends for {@code body} at {@code unixSeconds} signed with
   * {@code secret} ({@code t=<unixSeconds>,v1=<hex HMAC-SHA256 of "<unixSeconds>.<body>">}): for tests, and for
   * services that call each other back this way.
   */
  static String sign(byte[] secret, long unixSeconds, byte[] body) {
    return CallbackSignature.header(secret, unixSeconds, body);
  }
}
