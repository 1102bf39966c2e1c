package io.converge.core.tracing.internal;

/**
 * The W3C Trace Context {@code traceparent} header, validated by the rules of the recommendation (level 1):
 * {@code version "-" trace-id "-" parent-id "-" trace-flags}, lower-case hex, 2-32-16-2 digits; version
 * {@code ff} is invalid; a trace id or a parent id of only zeros is invalid; a version above {@code 00} may
 * carry more fields after a {@code '-'}. Pure Java (no OpenTelemetry class), immutable, thread-safe.
 *
 * @param traceId the 32 hex digits of the trace id
 * @param spanId the 16 hex digits of the parent (span) id
 * @param flags the trace flags (bit 0: sampled)
 */
public record TraceParent(String traceId, String spanId, byte flags) {

  private static final int LENGTH = 55;

  /**
   * Parses {@code header}; null when it is absent or malformed (the caller starts a new trace).
   *
   * @param header the header's value, may be null
   * @return the parsed value, or null when {@code header} is null or breaks a rule of the recommendation
   */
  public static TraceParent parse(String header) {
    if (header == null || header.length() < LENGTH) {
      return null;
    }
    String version = header.substring(0, 2);
    if (!hex(version) || version.equals("ff")) {
      return null;
    }
    // version 00 is exactly 55 characters; a later version may append "-..." fields
    if (header.length() > LENGTH && (version.equals("00") || header.charAt(LENGTH) != '-')) {
      return null;
    }
    if (header.charAt(2) != '-' || header.charAt(35) != '-' || header.charAt(52) != '-') {
      return null;
    }
    String traceId = header.substring(3, 35);
    String spanId = header.substring(36, 52);
    String flags = header.substring(53, 55);
    if (!hex(traceId) || !hex(spanId) || !hex(flags) || zeros(traceId) || zeros(spanId)) {
      return null;
    }
    return new TraceParent(traceId, spanId, (byte) Integer.parseInt(flags, 16));
  }

  /** The header of version {@code 00} for this context. */
  public String header() {
    return "00-" + traceId + "-" + spanId + "-" + String.format("%02x", flags & 0xff);
  }

  private static boolean hex(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        return false;
      }
    }
    return true;
  }

  private static boolean zeros(String s) {
    return s.chars().allMatch(c -> c == '0');
  }
}
