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
 *   <li>Spring MVC's {@code PathPattern}s match the {@linkplain #exact raw request URI's segments}, each
 *       decoded and stripped of its path parameters but not normalised ({@code /orders/..} is the segments
 *       {@code orders} and {@code ..}, which {@code /orders/{id}} matches), empty ones kept ({@code /a/} is
 *       {@code a} and an empty last segment, which Spring's {@code /a/*} matches);
 *   <li>and {@linkplain #segments the same without the empty segments}, so that a trailing slash or a double
 *       slash never escapes a pattern.
 * </ul>
 *
 * An endpoint is protected when any of them matches it. Case is significant, as it is for Tomcat and Spring MVC.
 */
final class RequestPaths {

  private RequestPaths() {
  }

  /** The views of {@code request}'s path that a pattern is matched against, in the order above; none is null. */
  static List<List<String>> views(HttpServletRequest request) {
    List<List<String>> views = new ArrayList<>(3);
    views.add(split(routed(request)));
    List<String> exact = exact(request);
    if (exact != null) {
      views.add(exact);
    }
    List<String> segments = segments(request);
    if (segments != null) {
      views.add(segments);
    }
    return views;
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

  /**
   * The segments of the request URI after the context path exactly as Spring MVC matches them: each decoded (UTF-8)
   * and without its path parameters, empty ones kept. Null when the URI does not start with the context path as
   * sent, or holds a malformed escape.
   */
  static List<String> exact(HttpServletRequest request) {
    String uri = request.getRequestURI();
    String context = request.getContextPath() == null ? "" : request.getContextPath();
    if (uri == null || !uri.startsWith(context)
        || (uri.length() > context.length() && uri.charAt(context.length()) != '/')) {
      return null;
    }
    String rest = uri.substring(context.length());
    List<String> out = new ArrayList<>();
    if (rest.isEmpty()) {
      return out;
    }
    for (String s : rest.substring(1).split("/", -1)) {
      String segment = decode(s);
      if (segment == null) {
        return null;
      }
      out.add(segment);
    }
    return out;
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
      String segment = decode(s);
      if (segment == null) {
        return null;
      }
      if (!segment.isEmpty()) {
        out.add(segment);
      }
    }
    return out;
  }

  /** A raw segment without its path parameters, decoded; null when it holds a malformed escape. */
  private static String decode(String raw) {
    int semicolon = raw.indexOf(';');
    String segment = semicolon < 0 ? raw : raw.substring(0, semicolon);
    try {
      // '+' is a plus in a path, not a space
      return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return null; // a malformed escape: the container refuses such a URI before any filter runs
    }
  }
}
