package io.converge.consumer.http;

import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.List;

/**
 * The Idempotency-Key filter's settings. Immutable; validated on construction, each error naming the
 * property ({@code converge.idempotency.*}) and the value.
 *
 * @param ttl how long a key and its response are kept: a retry within it is replayed, after it is a new
 *     request. Default 24 h; at least 1 min and longer than {@code lease}
 * @param lease how long a claim outlives its process: while the handler runs the filter renews it every
 *     third of the lease, so a slow but live handler keeps its key; once its process has died and the
 *     lease is over, another request with the key takes it over. Default 1 min; at least 1 s
 * @param keyHeader the request header carrying the key; default {@code Idempotency-Key}
 * @param replayedHeaders response headers stored and replayed (case-insensitive); default
 *     {@link #DEFAULT_REPLAYED_HEADERS}. Others reach the first client only
 * @param ignoredFields dotted JSON paths left out of every fingerprint (e.g. {@code client_ip},
 *     {@code meta.sent_at}); default none
 * @param maxBodyBytes the largest request body fingerprinted; a larger one is refused with 413. Default 1 MiB
 * @param maxResponseBytes the largest response body held back and stored; a larger one is sent to the client as the
 *     handler writes it, not stored, and the key answers its retries {@code 409 answer-not-stored}
 *     ({@link IdempotencyProblem#ANSWER_NOT_STORED}). Default 1 MiB; between 1 B and 64 MiB
 */
public record IdempotencySettings(Duration ttl, Duration lease, String keyHeader, List<String> replayedHeaders,
    List<String> ignoredFields, int maxBodyBytes, int maxResponseBytes) {

  /** The default TTL. */
  public static final Duration DEFAULT_TTL = Duration.ofHours(24);
  /** The default lease. */
  public static final Duration DEFAULT_LEASE = Duration.ofMinutes(1);
  /** The default key header. */
  public static final String DEFAULT_KEY_HEADER = "Idempotency-Key";
  /** The default replayed response headers. */
  public static final List<String> DEFAULT_REPLAYED_HEADERS = List.of("Content-Type", "Content-Language", "Location",
      "ETag", "Last-Modified", "Retry-After");
  /** The default largest fingerprinted body. */
  public static final int DEFAULT_MAX_BODY_BYTES = 1 << 20;
  /** The default largest stored response body. */
  public static final int DEFAULT_MAX_RESPONSE_BYTES = 1 << 20;

  /** Validates. */
  public IdempotencySettings {
    Require.atLeast("converge.idempotency.lease", lease, Duration.ofSeconds(1), "1s");
    Require.that(ttl != null && ttl.compareTo(Duration.ofMinutes(1)) >= 0 && ttl.compareTo(lease) > 0,
        "converge.idempotency.ttl", "be at least 1m and longer than the lease (" + lease + ")", ttl);
    Require.that(keyHeader != null && keyHeader.matches("[A-Za-z0-9-]{1,64}"), "converge.idempotency.key-header",
        "be a header name", "'" + keyHeader + "'");
    replayedHeaders = List.copyOf(replayedHeaders == null ? DEFAULT_REPLAYED_HEADERS : replayedHeaders);
    ignoredFields = List.copyOf(ignoredFields == null ? List.of() : ignoredFields);
    Require.that(maxBodyBytes >= 1 && maxBodyBytes <= 64 << 20, "converge.idempotency.max-body-size",
        "be between 1 B and 64 MiB", maxBodyBytes + " bytes");
    Require.that(maxResponseBytes >= 1 && maxResponseBytes <= 64 << 20, "converge.idempotency.max-response-size",
        "be between 1 B and 64 MiB", maxResponseBytes + " bytes");
  }

  /** The settings with the default {@code maxResponseBytes} (1 MiB); validated like the canonical constructor. */
  public IdempotencySettings(Duration ttl, Duration lease, String keyHeader, List<String> replayedHeaders,
      List<String> ignoredFields, int maxBodyBytes) {
    this(ttl, lease, keyHeader, replayedHeaders, ignoredFields, maxBodyBytes, DEFAULT_MAX_RESPONSE_BYTES);
  }

  /** These settings with {@code maxResponseBytes} instead (validated). */
  public IdempotencySettings withMaxResponseBytes(int maxResponseBytes) {
    return new IdempotencySettings(ttl, lease, keyHeader, replayedHeaders, ignoredFields, maxBodyBytes,
        maxResponseBytes);
  }

  /**
   * Checks that {@code endpoint} can be protected with these settings: its expected duration must be
   * shorter than the lease (renewed while the handler runs, the lease is the time a dead process keeps
   * its keys; an endpoint expected to outlast it is a configuration mistake).
   *
   * @throws IllegalArgumentException naming the endpoint and both durations
   */
  public void validate(IdempotentEndpoint endpoint) {
    Require.that(endpoint.expectedDuration().compareTo(lease) < 0, "endpoint " + endpoint + ": expected-duration",
        "be shorter than converge.idempotency.lease (" + lease + ")", endpoint.expectedDuration());
  }

  /** Every default. */
  public static IdempotencySettings defaults() {
    return new IdempotencySettings(DEFAULT_TTL, DEFAULT_LEASE, DEFAULT_KEY_HEADER, DEFAULT_REPLAYED_HEADERS, List.of(),
        DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_RESPONSE_BYTES);
  }
}
