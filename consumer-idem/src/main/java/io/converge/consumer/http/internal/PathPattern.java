package io.converge.consumer.http.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A compiled endpoint path pattern: {@code *} and {@code {name}} match one segment, {@code **} any
 * number of segments, {@code *} inside a segment any characters in it. Immutable and thread-safe.
 */
final class PathPattern {

  // a segment is already split off: whatever it holds (a decoded %2F or %0A too) is one segment
  private static final Pattern ANY_SEGMENT = Pattern.compile(".+", Pattern.DOTALL);
  /** The marker of {@code **}. */
  private static final Pattern ANY_SEGMENTS = Pattern.compile("**", Pattern.LITERAL);

  /** A segment matcher, or {@link #ANY_SEGMENTS}. */
  private final List<Pattern> segments;

  private PathPattern(List<Pattern> segments) {
    this.segments = segments;
  }

  static PathPattern compile(String pattern) {
    List<Pattern> segments = new ArrayList<>();
    for (String s : RequestPaths.split(pattern)) {
      if (s.equals("**")) {
        segments.add(ANY_SEGMENTS);
      } else if (s.equals("*") || (s.startsWith("{") && s.endsWith("}"))) {
        segments.add(ANY_SEGMENT);
      } else {
        StringBuilder regex = new StringBuilder();
        for (String part : s.split("\\*", -1)) {
          if (!regex.isEmpty()) {
            regex.append(".*");
          }
          regex.append(Pattern.quote(part));
        }
        segments.add(Pattern.compile(regex.toString(), Pattern.DOTALL));
      }
    }
    return new PathPattern(List.copyOf(segments));
  }

  boolean matches(String path) {
    return matches(0, RequestPaths.split(path), 0);
  }

  /** Matches a path already split into segments (none empty). */
  boolean matches(List<String> segments) {
    return matches(0, segments, 0);
  }

  private boolean matches(int i, List<String> path, int j) {
    if (i == segments.size()) {
      return j == path.size();
    }
    Pattern p = segments.get(i);
    if (p == ANY_SEGMENTS) {
      for (int k = j; k <= path.size(); k++) {
        if (matches(i + 1, path, k)) {
          return true;
        }
      }
      return false;
    }
    return j < path.size() && p.matcher(path.get(j)).matches() && matches(i + 1, path, j + 1);
  }
}
