package io.converge.consumer.http.internal;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

/**
 * A pattern compiled by Spring's own {@code PathPatternParser} and matched as Spring MVC matches it. Loaded only
 * when spring-web is present. Immutable and thread-safe.
 */
final class SpringPathPattern implements PathPattern {

  private static final String HEX = "0123456789ABCDEF";

  private final org.springframework.web.util.pattern.PathPattern pattern;

  private SpringPathPattern(org.springframework.web.util.pattern.PathPattern pattern) {
    this.pattern = pattern;
  }

  static PathPattern compile(String pattern) {
    try {
      return new SpringPathPattern(PathPatternParser.defaultInstance.parse(pattern));
    } catch (PatternParseException e) {
      throw PathPattern.refused(pattern, e.getPosition(), e.getMessage(), e);
    }
  }

  @Override
  public boolean matches(List<String> segments) {
    StringBuilder path = new StringBuilder();
    for (String segment : segments) {
      path.append('/');
      encode(segment, path);
    }
    // Spring matches each segment's decoded value: the encoding gives back exactly these segments
    return pattern.matches(PathContainer.parsePath(path.isEmpty() ? "/" : path.toString()));
  }

  /** Percent-encodes all but unreserved characters, so that no '/', ';' or '%' of a decoded segment is read again. */
  private static void encode(String segment, StringBuilder out) {
    for (byte b : segment.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (b & 0xFF);
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
        out.append(c);
      } else {
        out.append('%').append(HEX.charAt(c >> 4)).append(HEX.charAt(c & 0xF));
      }
    }
  }
}
