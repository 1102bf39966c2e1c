package io.converge.consumer.http.internal;

import io.converge.core.internal.Json;
import io.converge.consumer.http.IdempotencyException;
import io.converge.consumer.http.IdempotencyProblem;
import java.math.BigDecimal;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The single-pass parser of {@link JsonCanonicalizer}: reads one JSON value at {@link #pos} and
 * appends its canonical form, dropping the ignored members. One instance per document; not thread-safe.
 */
final class CanonicalJsonParser {

  final String s;
  int pos;

  CanonicalJsonParser(String s) {
    this.s = s;
  }

  IdempotencyException error(String what) {
    return new IdempotencyException(IdempotencyProblem.BODY_INVALID,
        "Invalid JSON body at offset " + pos + ": " + what);
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
    if (depth > JsonCanonicalizer.MAX_DEPTH) {
      throw error("nested deeper than " + JsonCanonicalizer.MAX_DEPTH);
    }
    char ch = peek();
    switch (ch) {
      case '{' -> object(out, ignore, depth);
      case '[' -> array(out, ignore, depth);
      case '"' -> Json.quote(out, string());
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
      Json.quote(out, m.getKey());
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
    if (pos - start > JsonCanonicalizer.MAX_NUMBER_LENGTH) {
      int length = pos - start;
      pos = start;
      throw error("number longer than " + JsonCanonicalizer.MAX_NUMBER_LENGTH + " characters (" + length + ")");
    }
    BigDecimal value;
    try {
      value = new BigDecimal(s.substring(start, pos));
    } catch (NumberFormatException | ArithmeticException e) {
      throw error("number out of range");
    }
    out.append(JsonCanonicalizer.canonicalNumber(value));
  }

  private int digits() {
    int start = pos;
    while (pos < s.length() && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
      pos++;
    }
    return pos - start;
  }
}
