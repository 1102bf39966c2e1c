package io.converge.consumer.http;

import io.converge.core.internal.Require;
import java.time.Duration;

/**
 * The signed-callback filter's settings. Immutable; validated on construction, each error naming the property
 * ({@code converge.callback.*}) and the value.
 *
 * @param signatureHeader the request header carrying {@code t=<unix seconds>,v1=<hex HMAC>}; default
 *     {@link #DEFAULT_SIGNATURE_HEADER}. A provider's own name (e.g. {@code Stripe-Signature}) works the same
 * @param tolerance how far the signature's timestamp may be from the server's clock, before or after it (clock
 *     skew both ways); a callback outside it is refused 400. Default 5 min; between 1 s and 1 h
 * @param replayWindow how long a verified callback's answer is kept in the Idempotency-Key store and replayed to a
 *     copy of it. Default 24 h; longer than twice the tolerance (a timestamp is accepted during twice the tolerance
 *     of the server's time, so a copy within it always finds the first answer) and longer than 1 min
 * @param maxBodyBytes the largest body read and verified; a larger one is refused 413 without being read beyond the
 *     limit. Default 1 MiB; between 1 B and 64 MiB
 */
public record CallbackSettings(String signatureHeader, Duration tolerance, Duration replayWindow, int maxBodyBytes) {

  /** The default signature header. */
  public static final String DEFAULT_SIGNATURE_HEADER = "Converge-Signature";
  /** The default tolerance. */
  public static final Duration DEFAULT_TOLERANCE = Duration.ofMinutes(5);
  /** The default replay window. */
  public static final Duration DEFAULT_REPLAY_WINDOW = Duration.ofHours(24);
  /** The default largest body. */
  public static final int DEFAULT_MAX_BODY_BYTES = 1 << 20;

  /** Validates. */
  public CallbackSettings {
    Require.that(signatureHeader != null && signatureHeader.matches("[A-Za-z0-9-]{1,64}"),
        "converge.callback.signature-header", "be a header name", "'" + signatureHeader + "'");
    Require.between("converge.callback.tolerance", tolerance, Duration.ofSeconds(1), Duration.ofHours(1),
        "1s and 1h");
    Require.that(replayWindow != null && replayWindow.compareTo(tolerance.multipliedBy(2)) > 0
        && replayWindow.compareTo(IdempotencySettings.DEFAULT_LEASE) > 0, "converge.callback.replay-window",
        "be longer than twice the tolerance (" + tolerance + ") and than 1m", replayWindow);
    Require.that(maxBodyBytes >= 1 && maxBodyBytes <= 64 << 20, "converge.callback.max-body-size",
        "be between 1 B and 64 MiB", maxBodyBytes + " bytes");
  }

  /** These settings with {@code signatureHeader} instead (validated). */
  public CallbackSettings withSignatureHeader(String signatureHeader) {
    return new CallbackSettings(signatureHeader, tolerance, replayWindow, maxBodyBytes);
  }

  /** These settings with {@code tolerance} instead (validated). */
  public CallbackSettings withTolerance(Duration tolerance) {
    return new CallbackSettings(signatureHeader, tolerance, replayWindow, maxBodyBytes);
  }

  /** These settings with {@code maxBodyBytes} instead (validated). */
  public CallbackSettings withMaxBodyBytes(int maxBodyBytes) {
    return new CallbackSettings(signatureHeader, tolerance, replayWindow, maxBodyBytes);
  }

  /** Every default. */
  public static CallbackSettings defaults() {
    return new CallbackSettings(DEFAULT_SIGNATURE_HEADER, DEFAULT_TOLERANCE, DEFAULT_REPLAY_WINDOW,
        DEFAULT_MAX_BODY_BYTES);
  }
}
