package io.converge.console.web;

/**
 * The console's answer to a {@link ConsoleRequest}: an HTML page with its status. Immutable.
 *
 * @param status the HTTP status
 * @param html the whole page, UTF-8
 */
public record ConsoleResponse(int status, String html) {

  /** The content type of every page. */
  public static final String CONTENT_TYPE = "text/html; charset=utf-8";

  /**
   * Headers every page is served with: no framing (clickjacking of the action buttons), no script or style
   * from anywhere but the page itself, no caching of the confirmation tokens.
   */
  public static final java.util.Map<String, String> HEADERS = java.util.Map.of(
      "Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self';"
          + " frame-ancestors 'none'",
      "X-Frame-Options", "DENY", "X-Content-Type-Options", "nosniff", "Cache-Control", "no-store",
      "Referrer-Policy", "no-referrer");
}
