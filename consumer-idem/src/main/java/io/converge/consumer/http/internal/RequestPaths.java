package io.converge.consumer.http.internal;

import jakarta.servlet.http.HttpServletRequest;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The paths a request is routed by, so that the filter protects every spelling of a protected path
 * ({@code /orders;a=1}, {@code /ord%65rs}, {@code //orders}, {@code /x/../orders}): a servlet container
 * and Spring MVC do not read the same one.
 *
 * <ul>
 *   <li>the container maps on {@linkplain #routed the servlet path and path info}: decoded, path parameters
 *       removed, dot segments and double slashes normalised;
 *   <li>Spring MVC's {@code PathPattern}s match the {@linkplain #segments raw request URI's segments}, each
 *       decoded and stripped of its path parameters but not normalised ({@code /orders/..} is the segments
 *       {@code orders} and {@code ..}, which {@code /orders/{id}} matches).
 * </ul>
 *
 * An endpoint is protected when either matches it. Empty segments are ignored, so a trailing slash or a
 * double slash never escapes a pattern. Case is significant, as it is for Tomcat and Spring MVC.
 */
final class RequestPaths {

  private RequestPaths() {
  }

  /** The path the container routed, relative to the context path: the canonical path of the fingerprint. */
  static String routed(HttpServletRequest request) {
    String servletPath = request.getServletPath() == null ? "" : request.getServletPath();
    String info = request.getPathInfo() == null ? "" : request.getPathInfo();
    String path = servletPath + info;
    return path.isEmpty() ? "/" : path;
  }

  /**
   * The segments of the request URI after the context path, as Spring MVC matches them: each decoded
   * (UTF-8) and without its path parameters; empty ones left out. Null when the URI cannot be aligned
   * with the context path (then only {@link #routed} is used).
   */
  static List<String> segments(HttpServletRequest request) {
    List<String> uri = decodedSegments(request.getRequestURI());
    List<String> context = decodedSegments(request.getContextPath() == null ? "" : request.getContextPath());
    if (uri == null || context == null || uri.size() < context.size()
        || !uri.subList(0, context.size()).equals(context)) {
      return null;
    }
    return uri.subList(context.size(), uri.size());
  }

  /** {@code path} split on {@code /}, empty segments left out. */
  static List<String> split(String path) {
    List<String> out = new ArrayList<>();
    for (String s : path.split("/")) {
      if (!s.isEmpty()) {
        out.add(s);
      }
    }
    return out;
  }

  private static List<String> decodedSegments(String raw) {
    List<String> out = new ArrayList<>();
    for (String s : raw.split("/")) {
      int semicolon = s.indexOf(';');
      String segment = semicolon < 0 ? s : s.substring(0, semicolon);
      if (segment.isEmpty()) {
        continue;
      }
      try {
        // '+' is a plus in a path, not a space
        out.add(URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        return null; // a malformed escape: the container refuses such a URI before any filter runs
      }
    }
    return out;
  }
}
