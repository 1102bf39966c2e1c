package io.converge.consumer.http;

import io.converge.consumer.http.internal.DefaultIdempotencyFilter;
import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * A request pattern the Idempotency-Key filter protects. Immutable.
 *
 * @param method the HTTP method, upper case, or {@code *} for any
 * @param path a path pattern relative to the context path, in Spring MVC's syntax ({@code PathPatternParser}, with
 *     or without Spring): {@code ?} one character, {@code *} any characters in a segment, {@code {name}} or
 *     {@code {name:regex}} a segment, several of these and literals in one ({@code /charges/{id}:refund}),
 *     {@code **} or {@code {*name}} any number of segments, at the start or the end of the pattern only
 *     ({@code /orders/**}, {@code /files/{*path}}); a pattern that cannot be compiled is refused, naming it
 * @param expectedDuration how long the handler usually takes; {@code Retry-After} of a 409 is this
 *     minus the time the first request has run, at least 1 s. Default {@link #DEFAULT_EXPECTED_DURATION}
 * @param required whether a request without a key is refused (400) rather than run unprotected; default true
 * @param ignoredFields dotted JSON paths left out of the fingerprint, added to the filter's global ones
 */
public record IdempotentEndpoint(String method, String path, Duration expectedDuration, boolean required,
    List<String> ignoredFields) {

  /** The default expected duration. */
  public static final Duration DEFAULT_EXPECTED_DURATION = Duration.ofSeconds(2);

  /** Validates, the path pattern compiled; {@code method} is upper-cased. */
  public IdempotentEndpoint {
    Require.that(method != null && (method.equals("*") || method.matches("[A-Za-z]{1,16}")), "endpoint method",
        "be an HTTP method or *", "'" + method + "'");
    method = method.toUpperCase(Locale.ROOT);
    Require.that(path != null && path.startsWith("/"), "endpoint path", "start with /", "'" + path + "'");
    DefaultIdempotencyFilter.checkPathPattern(path);
    Require.positive("endpoint " + method + " " + path + ": expected-duration", expectedDuration);
    ignoredFields = List.copyOf(ignoredFields == null ? List.of() : ignoredFields);
  }

  /** A required endpoint with the default expected duration and no ignored fields of its own. */
  public static IdempotentEndpoint of(String method, String path) {
    return new IdempotentEndpoint(method, path, DEFAULT_EXPECTED_DURATION, true, List.of());
  }

  /** This endpoint with {@code expectedDuration}. */
  public IdempotentEndpoint withExpectedDuration(Duration expectedDuration) {
    return new IdempotentEndpoint(method, path, expectedDuration, required, ignoredFields);
  }

  /** This endpoint with {@code required}. */
  public IdempotentEndpoint withRequired(boolean required) {
    return new IdempotentEndpoint(method, path, expectedDuration, required, ignoredFields);
  }

  /** This endpoint with its own {@code ignoredFields}. */
  public IdempotentEndpoint withIgnoredFields(List<String> ignoredFields) {
    return new IdempotentEndpoint(method, path, expectedDuration, required, ignoredFields);
  }

  /** {@code METHOD path}, the {@code endpoint} tag of the metrics. */
  @Override
  public String toString() {
    return method + " " + path;
  }
}
