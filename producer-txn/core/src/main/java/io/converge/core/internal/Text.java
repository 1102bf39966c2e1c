package io.converge.core.internal;

/**
 * The one way Converge's modules shape foreign text for a log line, an error message or a text column: {@link
 * #printable} for one line (a key, a header, an id quoted in an error), {@link #abbreviate} for an error text kept
 * whole but bounded (a stack trace's lines stay lines). Both cut by characters and never split a surrogate pair.
 */
public final class Text {

  private Text() {
  }

  /**
   * {@code s} with control characters (line breaks too), unpaired surrogates and backslashes escaped ({@code \}{@code
   * u0000}, {@code \\}), cut to at most {@code max} characters, the last one then {@code …}: one line, safe in a log
   * line and in any text column (PostgreSQL's text refuses NUL).
   */
  public static String printable(String s, int max) {
    StringBuilder b = new StringBuilder();
    int chars = 0;
    int fits = 0; // the length of b while it held at most max - 1 characters: where a cut value ends
    int i = 0;
    while (i < s.length() && chars <= max) {
      int cp = s.codePointAt(i); // an unpaired surrogate is returned as it is
      i += Character.charCount(cp);
      if (Character.isISOControl(cp) || cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
        b.append(String.format("\\u%04x", cp));
        chars += 6;
      } else if (cp == '\\') {
        b.append("\\\\");
        chars += 2;
      } else {
        b.appendCodePoint(cp);
        chars++;
      }
      if (chars < max) {
        fits = b.length();
      }
    }
    return chars <= max ? b.toString() : b.substring(0, fits) + "…";
  }

  /** {@link #printable} in single quotes: how an error message quotes a value it refuses. */
  public static String quoted(String s, int max) {
    return "'" + printable(s, max) + "'";
  }

  /**
   * {@code s} as a text column can hold it, cut to {@code max} characters (at least 2), the last one then {@code …}:
   * a NUL (which PostgreSQL text refuses: an error text quoting foreign data would otherwise make its own recording
   * fail) is written {@code \}{@code u0000}; everything else, line breaks included, is kept; a cut never splits a
   * surrogate pair.
   */
  public static String abbreviate(String s, int max) {
    String text = s.indexOf('\u0000') < 0 ? s : s.replace("\u0000", "\\u0000");
    if (text.length() <= max) {
      return text;
    }
    int end = Character.isHighSurrogate(text.charAt(max - 2)) ? max - 2 : max - 1;
    return text.substring(0, end) + "…";
  }
}
