package io.converge.consumer.http.internal;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Spring MVC's path pattern syntax without Spring (see {@link PathPattern}), for a filter used without spring-web.
 * It agrees with Spring's {@code PathPattern} on every case of {@code PathPatternTest}. Immutable and thread-safe.
 */
final class PortablePathPattern implements PathPattern {

  /** What one segment of a pattern is. */
  enum Kind {
    LITERAL, WILDCARD, SINGLE_CHARS, CAPTURE, REGEX
  }

  /** Where the pattern's {@code **} or {@code {*name}} is, if it has one. */
  enum Rest {
    NONE, START, END
  }

  /**
   * One segment of a pattern: {@code text} is the literal (or the segment with its {@code ?}s), {@code regex} the
   * segment's or the capture's regex (null for a capture without one), {@code captures} whether it has variables.
   */
  record Segment(Kind kind, String text, Pattern regex, boolean captures) {

    boolean matches(String value, boolean last) {
      if (value.isEmpty()) {
        // Spring: an empty path segment is no element; only a last '*' (or a regex without variables that matches
        // nothing) accepts the end of the path in its place
        return switch (kind) {
          case LITERAL -> text.isEmpty();
          case WILDCARD -> last;
          case REGEX -> last && !captures && regex.matcher("").matches();
          case SINGLE_CHARS, CAPTURE -> false;
        };
      }
      return switch (kind) {
        case LITERAL -> text.equals(value);
        case WILDCARD -> true;
        case SINGLE_CHARS -> sameExceptQuestionMarks(value);
        case CAPTURE -> regex == null || regex.matcher(value).matches();
        case REGEX -> regex.matcher(value).matches();
      };
    }

    private boolean sameExceptQuestionMarks(String value) {
      if (value.length() != text.length()) {
        return false;
      }
      for (int i = 0; i < text.length(); i++) {
        if (text.charAt(i) != '?' && text.charAt(i) != value.charAt(i)) {
          return false;
        }
      }
      return true;
    }
  }

  /** The segments but the {@code **} or {@code {*name}} one. */
  private final List<Segment> segments;
  private final Rest rest;

  PortablePathPattern(List<Segment> segments, Rest rest) {
    this.segments = List.copyOf(segments);
    this.rest = rest;
  }

  /**
   * @throws IllegalArgumentException naming the pattern, where Spring's parser refuses it
   */
  static PathPattern compile(String pattern) {
    return new PortablePatternParser(pattern).parse();
  }

  @Override
  public boolean matches(List<String> path) {
    List<String> p = path.isEmpty() ? List.of("") : path; // "/" is one empty segment
    int m = segments.size();
    return switch (rest) {
      case NONE -> p.size() == m && matchesFrom(p, 0, true);
      // the rest of the path starts at a separator: any segments, or none
      case END -> p.size() >= m && matchesFrom(p, 0, false);
      // any segments before the ones the pattern names, which end the path
      case START -> p.size() >= m && matchesFrom(p, p.size() - m, true);
    };
  }

  private boolean matchesFrom(List<String> path, int from, boolean lastEndsThePath) {
    for (int i = 0; i < segments.size(); i++) {
      if (!segments.get(i).matches(path.get(from + i), lastEndsThePath && i == segments.size() - 1)) {
        return false;
      }
    }
    return true;
  }
}
