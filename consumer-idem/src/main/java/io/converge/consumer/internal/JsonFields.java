package io.converge.consumer.internal;

/**
 * Reads one top-level string or integer field of a JSON object without a JSON library. Nested
 * objects and arrays are skipped; anything that is not well-formed enough yields null (an id is
 * never guessed from a broken payload).
 */
public final class JsonFields {

  private JsonFields() {
  }

  /** The value of top-level {@code field} in {@code json} as text, or null. */
  public static String topLevel(String json, String field) {
    try {
      Cursor c = new Cursor(json);
      c.ws();
      if (!c.eat('{')) {
        return null;
      }
      c.ws();
      if (c.eat('}')) {
        return null;
      }
      while (true) {
        c.ws();
        String name = c.string();
        c.ws();
        if (name == null || !c.eat(':')) {
          return null;
        }
        c.ws();
        int start = c.pos;
        String value = c.value();
        if (name.equals(field)) {
          char first = json.charAt(start);
          if (first == '"') {
            return value;
          }
          return value != null && value.matches("-?\\d{1,30}") ? value : null;
        }
        c.ws();
        if (c.eat('}')) {
          return null;
        }
        if (!c.eat(',')) {
          return null;
        }
      }
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static final class Cursor {

    final String s;
    int pos;

    Cursor(String s) {
      this.s = s;
    }

    void ws() {
      while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
        pos++;
      }
    }

    boolean eat(char ch) {
      if (pos < s.length() && s.charAt(pos) == ch) {
        pos++;
        return true;
      }
      return false;
    }

    String string() {
      if (!eat('"')) {
        return null;
      }
      StringBuilder b = new StringBuilder();
      while (true) {
        char ch = s.charAt(pos++);
        if (ch == '"') {
          return b.toString();
        }
        if (ch == '\\') {
          char e = s.charAt(pos++);
          switch (e) {
            case 'n' -> b.append('\n');
            case 't' -> b.append('\t');
            case 'r' -> b.append('\r');
            case 'b' -> b.append('\b');
            case 'f' -> b.append('\f');
            case 'u' -> {
              b.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
              pos += 4;
            }
            default -> b.append(e);
          }
        } else {
          b.append(ch);
        }
      }
    }

    /** Consumes any value; returns a string's content or a scalar's text, null for objects/arrays. */
    String value() {
      char ch = s.charAt(pos);
      if (ch == '"') {
        return string();
      }
      if (ch == '{' || ch == '[') {
        int depth = 0;
        do {
          char c = s.charAt(pos);
          if (c == '"') {
            string();
            continue;
          }
          if (c == '{' || c == '[') {
            depth++;
          } else if (c == '}' || c == ']') {
            depth--;
          }
          pos++;
        } while (depth > 0);
        return null;
      }
      int start = pos;
      while (pos < s.length() && ",}] \t\r\n".indexOf(s.charAt(pos)) < 0) {
        pos++;
      }
      return start == pos ? null : s.substring(start, pos);
    }
  }
}
