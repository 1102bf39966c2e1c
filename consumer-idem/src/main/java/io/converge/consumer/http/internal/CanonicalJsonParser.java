package io.converge.consumer.http.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import io.converge.consumer.http.IdempotencyException;
import io.converge.consumer.http.IdempotencyProblem;
import io.converge.core.internal.Json;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The single pass of {@link JsonCanonicalizer} over {@link Json}'s parser (Jackson's streaming parser: JSON's own
 * grammar and whitespace, nesting and number length bounded): appends each value's canonical form, dropping the
 * ignored members, refusing duplicate member names. One instance per document; not thread-safe.
 */
final class CanonicalJsonParser {

  private final String text;
  private final JsonParser parser;

  private CanonicalJsonParser(String text, JsonParser parser) {
    this.text = text;
    this.parser = parser;
  }

  /**
   * The canonical form of the one JSON value {@code text} holds.
   *
   * @throws IdempotencyException {@link IdempotencyProblem#BODY_INVALID} naming the offset of the error
   */
  static String canonical(String text, Ignore ignored) {
    try (JsonParser p = Json.parser(text)) {
      CanonicalJsonParser c = new CanonicalJsonParser(text, p);
      try {
        StringBuilder out = new StringBuilder(text.length());
        JsonToken first = p.nextToken();
        if (first == null) {
          throw error(text.length(), "unexpected end");
        }
        c.value(first, out, ignored);
        if (p.nextToken() != null) {
          throw error(c.tokenOffset(), "unexpected content after the JSON value");
        }
        return out.toString();
      } catch (StreamConstraintsException e) {
        throw c.limit(e);
      } catch (JsonProcessingException e) {
        long at = e.getLocation() == null ? c.tokenOffset() : e.getLocation().getCharOffset();
        throw error(at, e.getOriginalMessage());
      }
    } catch (IOException e) {
      throw error(0, e.getMessage());
    }
  }

  private static IdempotencyException error(long offset, String what) {
    return new IdempotencyException(IdempotencyProblem.BODY_INVALID,
        "Invalid JSON body at offset " + offset + ": " + what);
  }

  private long tokenOffset() {
    return parser.currentTokenLocation().getCharOffset();
  }

  /** A bound of {@link Json}'s parser, said the way this filter always said it. */
  private IdempotencyException limit(StreamConstraintsException e) {
    String message = String.valueOf(e.getOriginalMessage());
    if (message.contains("nesting depth")) {
      return error(tokenOffset(), "nested deeper than " + JsonCanonicalizer.MAX_DEPTH);
    }
    if (message.startsWith("Number value length")) {
      // the parser stops at (or just past) the end of the number; its token location is still the previous one
      int end = (int) Math.min(parser.currentLocation().getCharOffset(), text.length());
      while (end > 0 && !isNumberChar(text.charAt(end - 1))) {
        end--;
      }
      int start = end;
      while (start > 0 && isNumberChar(text.charAt(start - 1))) {
        start--;
      }
      return error(start, "number longer than " + JsonCanonicalizer.MAX_NUMBER_LENGTH + " characters ("
          + (end - start) + ")");
    }
    return error(tokenOffset(), message);
  }

  private static boolean isNumberChar(char ch) {
    return ch >= '0' && ch <= '9' || ch == '-' || ch == '+' || ch == '.' || ch == 'e' || ch == 'E';
  }

  private void value(JsonToken token, StringBuilder out, Ignore ignore) throws IOException {
    switch (token) {
      case START_OBJECT -> object(out, ignore);
      case START_ARRAY -> array(out, ignore);
      case VALUE_STRING -> Json.quote(out, parser.getText());
      case VALUE_TRUE, VALUE_FALSE, VALUE_NULL -> out.append(token.asString());
      case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> number(out);
      default -> throw error(tokenOffset(), "unexpected " + token);
    }
  }

  private void object(StringBuilder out, Ignore ignore) throws IOException {
    TreeMap<String, String> members = new TreeMap<>();
    // a removed member still occupies its name, so that its duplicate is refused too
    Set<String> removed = new HashSet<>();
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String name = parser.currentName();
      long at = tokenOffset();
      Ignore child = ignore == null ? null : ignore.children.get(name);
      StringBuilder member = new StringBuilder();
      value(parser.nextToken(), member, child);
      if (members.containsKey(name) || removed.contains(name)) {
        throw error(at, "duplicate member name \"" + name + "\"");
      }
      if (child != null && child.leaf) {
        removed.add(name);
      } else {
        members.put(name, member.toString());
      }
    }
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

  private void array(StringBuilder out, Ignore ignore) throws IOException {
    out.append('[');
    boolean first = true;
    for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
      if (!first) {
        out.append(',');
      }
      first = false;
      value(t, out, ignore);
    }
    out.append(']');
  }

  private void number(StringBuilder out) throws IOException {
    BigDecimal value;
    try {
      value = new BigDecimal(parser.getText());
    } catch (NumberFormatException | ArithmeticException e) {
      throw error(tokenOffset(), "number out of range");
    }
    out.append(JsonCanonicalizer.canonicalNumber(value));
  }
}
