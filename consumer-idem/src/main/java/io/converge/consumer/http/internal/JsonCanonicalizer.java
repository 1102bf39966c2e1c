package io.converge.consumer.http.internal;

import io.converge.consumer.http.IdempotencyException;
import io.converge.consumer.http.IdempotencyProblem;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The canonical form of a JSON document, so that two bodies that mean the same thing fingerprint the
 * same: object members sorted by name, insignificant whitespace dropped, strings re-escaped one way,
 * numbers by value ({@code 100}, {@code 100.00} and {@code 1e2} are all {@code 1e2}), and ignored
 * fields removed. An ignored field is a dotted path from the root ({@code client_ip},
 * {@code meta.sent_at}); arrays are transparent, so {@code items.ts} is {@code ts} in every element of
 * {@code items}. Duplicate member names are refused: the same document would mean different things to
 * different parsers.
 *
 * <p>Bounded like Jackson's defaults (Jackson 3.1.4 of Spring Boot 4.0.7, {@code StreamReadConstraints}):
 * a number longer than {@value #MAX_NUMBER_LENGTH} characters is refused before it is parsed (an unbounded
 * one cost seconds of CPU in {@code BigDecimal}), and nesting deeper than {@value #MAX_DEPTH} (Jackson: 500)
 * is refused. Exponents cost nothing: numbers are never expanded to their plain form.
 *
 * <p>Immutable and thread-safe.
 */
public final class JsonCanonicalizer {

  /** Nesting limit (stricter than Jackson's 500: every level copies its members once). */
  static final int MAX_DEPTH = 64;
  /** Jackson's {@code StreamReadConstraints.DEFAULT_MAX_NUM_LEN}. */
  static final int MAX_NUMBER_LENGTH = 1000;

  /** A node of the ignored-paths tree: a leaf removes the field, an inner node descends. */
  private static final class Ignore {
    final Map<String, Ignore> children = new HashMap<>();
    boolean leaf;
  }

  private final Ignore ignored = new Ignore();

  /** A canonicaliser removing the dotted {@code ignoredFields}. */
  public JsonCanonicalizer(Collection<String> ignoredFields) {
    for (String path : ignoredFields) {
      if (path == null || path.isBlank() || path.startsWith(".") || path.endsWith(".") || path.contains("..")) {
        throw new IllegalArgumentException("ignored field must be a dotted path like meta.client_ip, but was '" + path + "'");
      }
      Ignore node = ignored;
      for (String segment : path.split("\\.")) {
        node = node.children.computeIfAbsent(segment, s -> new Ignore());
      }
      node.leaf = true;
    }
  }

  /**
   * The canonical UTF-8 bytes of {@code json}.
   *
   * @throws IdempotencyException {@link IdempotencyProblem#BODY_INVALID} naming the position of the error
   */
  public byte[] canonicalize(byte[] json) {
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(json)).toString();
    } catch (CharacterCodingException e) {
      throw new IdempotencyException(IdempotencyProblem.BODY_INVALID, "The JSON body is not valid UTF-8", null, null, e);
    }
    Parser p = new Parser(text);
    StringBuilder out = new StringBuilder(text.length());
    p.ws();
    p.value(out, ignored, 0);
    p.ws();
    if (p.pos != text.length()) {
      throw p.error("unexpected content after the JSON value");
    }
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static final class Parser {
    final String s;
    int pos;

    Parser(String s) {
      this.s = s;
    }

    IdempotencyException error(String what) {
      return new IdempotencyException(IdempotencyProblem.BODY_INVALID, "Invalid JSON body at offset " + pos + ": " + what);
    }

    void ws() {
      while (pos < s.length() && " \t\r\n".indexOf(s.charAt(pos)) >= 0) {
        pos++;
      }
    }

    char peek() {
      if (pos >= s.length()) {
        throw error("unexpected end");
      }
      return s.charAt(pos);
    }

    void expect(char ch) {
      if (peek() != ch) {
        throw error("expected '" + ch + "' but found '" + s.charAt(pos) + "'");
      }
      pos++;
    }

    void value(StringBuilder out, Ignore ignore, int depth) {
      if (depth > MAX_DEPTH) {
        throw error("nested deeper than " + MAX_DEPTH);
      }
      char ch = peek();
      switch (ch) {
        case '{' -> object(out, ignore, depth);
        case '[' -> array(out, ignore, depth);
        case '"' -> quote(out, string());
        case 't' -> literal(out, "true");
        case 'f' -> literal(out, "false");
        case 'n' -> literal(out, "null");
        default -> number(out);
      }
    }

    void object(StringBuilder out, Ignore ignore, int depth) {
      expect('{');
      TreeMap<String, String> members = new TreeMap<>();
      // a removed member still occupies its name, so that its duplicate is refused too
      Set<String> removed = new HashSet<>();
      ws();
      if (peek() != '}') {
        while (true) {
          ws();
          int at = pos;
          String name = string();
          ws();
          expect(':');
          ws();
          Ignore child = ignore == null ? null : ignore.children.get(name);
          StringBuilder member = new StringBuilder();
          value(member, child, depth + 1);
          if (members.containsKey(name) || removed.contains(name)) {
            pos = at;
            throw error("duplicate member name \"" + name + "\"");
          }
          if (child != null && child.leaf) {
            removed.add(name);
          } else {
            members.put(name, member.toString());
          }
          ws();
          if (peek() == ',') {
            pos++;
            continue;
          }
          break;
        }
      }
      expect('}');
      out.append('{');
      boolean first = true;
      for (Map.Entry<String, String> m : members.entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        quote(out, m.getKey());
        out.append(':').append(m.getValue());
      }
      out.append('}');
    }

    void array(StringBuilder out, Ignore ignore, int depth) {
      expect('[');
      out.append('[');
      ws();
      if (peek() != ']') {
        while (true) {
          ws();
          value(out, ignore, depth + 1);
          ws();
          if (peek() == ',') {
            pos++;
            out.append(',');
            continue;
          }
          break;
        }
      }
      expect(']');
      out.append(']');
    }

    String string() {
      expect('"');
      StringBuilder b = new StringBuilder();
      while (true) {
        char ch = peek();
        pos++;
        if (ch == '"') {
          return b.toString();
        }
        if (ch < 0x20) {
          pos--;
          throw error("unescaped control character in a string");
        }
        if (ch != '\\') {
          b.append(ch);
          continue;
        }
        char e = peek();
        pos++;
        switch (e) {
          case '"', '\\', '/' -> b.append(e);
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'n' -> b.append('\n');
          case 'r' -> b.append('\r');
          case 't' -> b.append('\t');
          case 'u' -> {
            if (pos + 4 > s.length()) {
              throw error("truncated \\u escape");
            }
            try {
              b.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
            } catch (NumberFormatException nfe) {
              throw error("bad \\u escape");
            }
            pos += 4;
          }
          default -> {
            pos--;
            throw error("bad escape \\" + e);
          }
        }
      }
    }

    void literal(StringBuilder out, String word) {
      if (!s.startsWith(word, pos)) {
        throw error("expected " + word);
      }
      pos += word.length();
      out.append(word);
    }

    void number(StringBuilder out) {
      int start = pos;
      if (peek() == '-') {
        pos++;
      }
      int intStart = pos;
      int intDigits = digits();
      if (intDigits == 0) {
        pos = start;
        throw error("unexpected character '" + s.charAt(start) + "'");
      }
      if (intDigits > 1 && s.charAt(intStart) == '0') {
        pos = start;
        throw error("leading zero in a number");
      }
      if (pos < s.length() && s.charAt(pos) == '.') {
        pos++;
        if (digits() == 0) {
          throw error("digits expected after the decimal point");
        }
      }
      if (pos < s.length() && (s.charAt(pos) == 'e' || s.charAt(pos) == 'E')) {
        pos++;
        if (pos < s.length() && (s.charAt(pos) == '+' || s.charAt(pos) == '-')) {
          pos++;
        }
        if (digits() == 0) {
          throw error("digits expected in the exponent");
        }
      }
      if (pos - start > MAX_NUMBER_LENGTH) {
        int length = pos - start;
        pos = start;
        throw error("number longer than " + MAX_NUMBER_LENGTH + " characters (" + length + ")");
      }
      BigDecimal value;
      try {
        value = new BigDecimal(s.substring(start, pos));
      } catch (NumberFormatException | ArithmeticException e) {
        throw error("number out of range");
      }
      out.append(canonicalNumber(value));
    }

    private int digits() {
      int start = pos;
      while (pos < s.length() && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
        pos++;
      }
      return pos - start;
    }
  }

  /** {@code unscaled e exponent} with trailing zeros stripped: one spelling per numeric value. */
  static String canonicalNumber(BigDecimal value) {
    if (value.signum() == 0) {
      return "0";
    }
    BigDecimal stripped = value.stripTrailingZeros();
    return stripped.unscaledValue() + "e" + (-(long) stripped.scale());
  }

  static void quote(StringBuilder out, String text) {
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char ch = text.charAt(i);
      if (ch == '"' || ch == '\\') {
        out.append('\\').append(ch);
      } else if (ch < 0x20 || loneSurrogate(text, i)) {
        // a lone surrogate has no UTF-8 form (it would become '?'): escaped, it stays itself
        out.append(String.format("\\u%04x", (int) ch));
      } else {
        out.append(ch);
      }
    }
    out.append('"');
  }

  private static boolean loneSurrogate(String text, int i) {
    char ch = text.charAt(i);
    if (Character.isHighSurrogate(ch)) {
      return i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1));
    }
    return Character.isLowSurrogate(ch) && (i == 0 || !Character.isHighSurrogate(text.charAt(i - 1)));
  }
}
