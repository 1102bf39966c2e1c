package io.converge.consumer.http.internal;

import io.converge.consumer.http.internal.PortablePathPattern.Kind;
import io.converge.consumer.http.internal.PortablePathPattern.Rest;
import io.converge.consumer.http.internal.PortablePathPattern.Segment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Parses a pattern (starting with {@code /}) into a {@link PortablePathPattern}, segment by segment, refusing what
 * Spring's {@code PathPatternParser} refuses. One instance per pattern; not thread-safe.
 */
final class PortablePatternParser {

  private final String pattern;
  private final List<Segment> segments = new ArrayList<>();
  private final Set<String> names = new HashSet<>();
  private Rest rest = Rest.NONE;
  private int pos = 1;

  // the segment being parsed
  private int captures;
  private boolean captureRest;
  private int captureStart;
  private int captureEnd;
  private final List<String> segmentNames = new ArrayList<>();
  private String captureRegex;

  PortablePatternParser(String pattern) {
    this.pattern = pattern;
  }

  PortablePathPattern parse() {
    while (true) {
      segment();
      if (pos == pattern.length()) {
        return new PortablePathPattern(segments, rest);
      }
      pos++; // the separator
    }
  }

  private void segment() {
    int start = pos;
    captures = 0;
    captureRest = false;
    segmentNames.clear();
    if (pattern.startsWith("**", pos) && (pos + 2 == pattern.length() || pattern.charAt(pos + 2) == '/')) {
      pos += 2;
      restOfThePath(start);
      return;
    }
    StringBuilder regex = new StringBuilder();
    StringBuilder literal = new StringBuilder();
    boolean wildcard = false;
    boolean questionMarks = false;
    while (pos < pattern.length() && pattern.charAt(pos) != '/') {
      char c = pattern.charAt(pos);
      if (c == '{') {
        quote(literal, regex);
        capture();
        regex.append('(').append(captureRegex == null ? ".*" : captureRegex).append(')');
        continue;
      }
      if (c == '}') {
        throw refused(pos, "Missing preceding open capture character before variable name {");
      } else if (c == '*' || c == '?') {
        quote(literal, regex);
        regex.append(c == '*' ? ".*" : ".");
        wildcard |= c == '*';
        questionMarks |= c == '?';
      } else {
        literal.append(c);
      }
      pos++;
    }
    quote(literal, regex);
    String text = pattern.substring(start, pos);
    boolean whole = captures == 1 && captureStart == start && captureEnd == pos;
    if (captures > 0 && captureRest) {
      if (!whole) {
        throw refused(start, "{*...} cannot be mixed with other path elements in the same path segment");
      }
      restOfThePath(start);
    } else if (whole) {
      record(segmentNames.get(0), start);
      segments.add(new Segment(Kind.CAPTURE, text, captureRegex == null ? null : compile(captureRegex, start), true));
    } else if (captures > 0 || (wildcard && !text.equals("*"))) {
      for (String name : segmentNames) {
        record(name, start);
      }
      segments.add(new Segment(Kind.REGEX, text, compile(regex.toString(), start), captures > 0));
    } else if (wildcard) {
      segments.add(new Segment(Kind.WILDCARD, text, null, false));
    } else {
      segments.add(new Segment(questionMarks ? Kind.SINGLE_CHARS : Kind.LITERAL, text, null, false));
    }
  }

  /** A {@code {name}}, {@code {name:regex}} or {@code {*name}} at {@code pos}; leaves {@code pos} after it. */
  private void capture() {
    captureStart = pos;
    int j = pos + 1;
    boolean isRest = j < pattern.length() && pattern.charAt(j) == '*';
    captureRest |= isRest;
    int nameStart = isRest ? j + 1 : j;
    captureRegex = null;
    for (j = nameStart; j < pattern.length(); j++) {
      char c = pattern.charAt(j);
      if (c == '}' || (c == ':' && !isRest)) {
        segmentNames.add(pattern.substring(nameStart, j));
        if (c == ':') {
          int close = endOfRegex(j + 1);
          captureRegex = pattern.substring(j + 1, close);
          j = close;
        }
        pos = captureEnd = j + 1;
        captures++;
        return;
      } else if (c == '/') {
        break;
      } else if (c == '{') {
        throw refused(j, "Not allowed to nest variable captures");
      } else if (j == nameStart && !Character.isJavaIdentifierStart(c)) {
        throw refused(j, "Char '" + c + "' not allowed at start of captured variable name");
      } else if (j > nameStart && !Character.isJavaIdentifierPart(c) && c != '-') {
        throw refused(j, "Char '" + c + "' is not allowed in a captured variable name");
      }
    }
    throw refused(j - 1, "Expected close capture character after variable name }");
  }

  /** The index of the {@code }} closing a regex that starts at {@code from}: nested pairs and escapes allowed. */
  private int endOfRegex(int from) {
    int depth = 0;
    boolean escaped = false;
    int j = from;
    while (j < pattern.length()) {
      char c = pattern.charAt(j);
      if (c == '\\' && !escaped) {
        j++;
        escaped = true;
        continue;
      }
      if (c == '{' && !escaped) {
        depth++;
      } else if (c == '}' && !escaped) {
        if (depth == 0) {
          if (j == from) {
            throw refused(from, "Missing regex constraint on capture");
          }
          return j;
        }
        depth--;
      }
      if (c == '/' && !escaped) {
        throw refused(j, "Expected close capture character after variable name }");
      }
      j++;
      escaped = false;
    }
    throw refused(j - 1, "Expected close capture character after variable name }");
  }

  /** A {@code **} or {@code {*name}} segment starting at {@code start}, {@code pos} at its end. */
  private void restOfThePath(int start) {
    if (rest != Rest.NONE) {
      throw refused(start, "Multiple {*...} or ** pattern elements are not allowed");
    }
    boolean last = pos == pattern.length();
    if (!segments.isEmpty() && !last) {
      throw refused(start, "{*...} or ** pattern elements should be placed at the start or end of the pattern");
    }
    rest = last ? Rest.END : Rest.START;
  }

  private void record(String name, int at) {
    if (!names.add(name)) {
      throw refused(at, "Not allowed to capture '" + name + "' twice in the same pattern");
    }
  }

  private Pattern compile(String regex, int at) {
    try {
      return Pattern.compile(regex, Pattern.DOTALL);
    } catch (PatternSyntaxException e) {
      throw PathPattern.refused(pattern, at, "Exception occurred in regex pattern compilation: " + e.getDescription(),
          e);
    }
  }

  private static void quote(StringBuilder literal, StringBuilder regex) {
    if (!literal.isEmpty()) {
      regex.append(Pattern.quote(literal.toString()));
      literal.setLength(0);
    }
  }

  private IllegalArgumentException refused(int at, String why) {
    return PathPattern.refused(pattern, at, why, null);
  }
}
