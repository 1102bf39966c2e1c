package io.converge.consumer.http.internal;

import java.util.List;

/**
 * A compiled endpoint path pattern in Spring MVC's syntax ({@code PathPatternParser}): a literal segment,
 * {@code ?} one character, {@code *} any characters in a segment (a whole {@code *} segment also matches an
 * empty last one), {@code {name}} a non-empty segment, {@code {name:regex}} a segment the regex matches, several
 * of these and literals in one segment ({@code {id}:refund}), {@code **} and {@code {*name}} any number of
 * segments, at the start or the end of the pattern only. Case is significant. Spring's own parser compiles the
 * pattern when spring-web is present, so that the filter reads an {@code @Idempotent} mapping exactly as Spring
 * MVC does; {@link PortablePathPattern} implements the same syntax without it. Immutable and thread-safe.
 */
interface PathPattern {

  /** Matches a path given as its decoded segments, the path being {@code "/" + String.join("/", segments)}. */
  boolean matches(List<String> segments);

  /** Matches {@code path} split on {@code /}, empty segments left out: the servlet container's view of it. */
  default boolean matches(String path) {
    return matches(RequestPaths.split(path));
  }

  /**
   * Compiles {@code pattern} with Spring's {@code PathPatternParser} when spring-web is on the class path, else
   * with {@link PortablePathPattern}.
   *
   * @throws IllegalArgumentException naming the pattern and what is wrong with it
   */
  static PathPattern compile(String pattern) {
    requireSlash(pattern);
    // SpringPathPattern is loaded only here, so that nothing needs spring-web without it
    return springPresent() ? SpringPathPattern.compile(pattern) : PortablePathPattern.compile(pattern);
  }

  /** The pattern compiled without Spring, whether Spring is present or not. */
  static PathPattern portable(String pattern) {
    requireSlash(pattern);
    return PortablePathPattern.compile(pattern);
  }

  /** The error of a pattern that cannot be compiled; {@code position} counts from 0. */
  static IllegalArgumentException refused(String pattern, int position, String why, Throwable cause) {
    return new IllegalArgumentException("path pattern '" + pattern + "' cannot be compiled (Spring MVC's syntax): "
        + why + " (at character " + position + ")", cause);
  }

  private static void requireSlash(String pattern) {
    if (pattern == null || !pattern.startsWith("/")) {
      throw refused(String.valueOf(pattern), 0, "a pattern starts with /", null);
    }
  }

  private static boolean springPresent() {
    try {
      Class.forName("org.springframework.web.util.pattern.PathPatternParser", false,
          PathPattern.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
