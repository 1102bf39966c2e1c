package io.converge.console.web;

import java.net.URI;
import java.util.Locale;
import java.util.Set;

/**
 * Refuses the requests that a web page open in the operator's browser could send to the console: under DNS
 * rebinding a page of another site reaches a loopback-only console with its own host name in {@code Host},
 * and any page can POST a form cross-site. A loopback-only console answers only requests whose {@code Host}
 * is a loopback name or address; an action (POST) is refused when the browser says it comes from another site
 * ({@code Sec-Fetch-Site}) or another origin ({@code Origin} not matching {@code Host}). Clients that send
 * neither header (curl, scripts) are not browsers and are not affected. Thread-safe (stateless).
 */
public final class SameOrigin {

  private static final Set<String> LOOPBACK_HOSTS = Set.of("localhost", "127.0.0.1", "[::1]", "::1");

  private SameOrigin() {
  }

  /**
   * Why the request is refused, or null when it is served.
   *
   * @param method the HTTP method
   * @param host the {@code Host} header (null when absent)
   * @param origin the {@code Origin} header (null when absent)
   * @param fetchSite the {@code Sec-Fetch-Site} header (null when absent)
   * @param loopbackOnly whether the console serves this host only (then {@code Host} must name it)
   */
  public static String refusal(String method, String host, String origin, String fetchSite, boolean loopbackOnly) {
    if (loopbackOnly && host != null && !LOOPBACK_HOSTS.contains(hostName(host))) {
      return "The Converge console serves this host only: Host '" + host + "' is not a loopback name";
    }
    if (!"POST".equals(method)) {
      return null;
    }
    if (fetchSite != null && !fetchSite.equals("same-origin") && !fetchSite.equals("none")) {
      return "An action must come from the console's own pages (Sec-Fetch-Site: " + fetchSite + ")";
    }
    // "null": the console's own pages send no referrer (Referrer-Policy: no-referrer), so a browser serializes
    // their origin as "null"; Sec-Fetch-Site above decides for the browsers that send it
    if (origin != null && !origin.trim().equals("null") && host != null && !sameHost(origin, host)) {
      return "An action must come from the console's own pages (Origin " + origin + ", Host " + host + ")";
    }
    return null;
  }

  /** The host name of a {@code Host} header, without its port, lower case. */
  static String hostName(String host) {
    String h = host.trim().toLowerCase(Locale.ROOT);
    if (h.startsWith("[")) {
      int end = h.indexOf(']');
      return end < 0 ? h : h.substring(0, end + 1);
    }
    int colon = h.indexOf(':');
    return colon < 0 || h.indexOf(':', colon + 1) >= 0 ? h : h.substring(0, colon);
  }

  private static boolean sameHost(String origin, String host) {
    try {
      URI o = URI.create(origin.trim());
      if (o.getHost() == null) {
        return false;
      }
      String authority = o.getPort() < 0 ? o.getHost() : o.getHost() + ":" + o.getPort();
      return authority.equalsIgnoreCase(host.trim());
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
