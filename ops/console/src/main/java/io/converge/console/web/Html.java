package io.converge.console.web;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * HTML helpers of the console's pages. Every value that comes from the database or the request goes through
 * {@link #escape} (a message key is attacker-controlled input). Stateless.
 */
public final class Html {

  private Html() {
  }

  /** {@code text} with {@code & < > " '} escaped, for element content and quoted attributes; null is empty. */
  public static String escape(Object text) {
    if (text == null) {
      return "";
    }
    String s = text.toString();
    StringBuilder out = new StringBuilder(s.length() + 16);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&' -> out.append("&amp;");
        case '<' -> out.append("&lt;");
        case '>' -> out.append("&gt;");
        case '"' -> out.append("&quot;");
        case '\'' -> out.append("&#39;");
        default -> out.append(c);
      }
    }
    return out.toString();
  }

  /** {@code text} encoded for a URL query value. */
  public static String url(String text) {
    return URLEncoder.encode(text == null ? "" : text, StandardCharsets.UTF_8);
  }

  /** {@code 3d 4h}, {@code 2h 5m}, {@code 12m 3s}, {@code 5m}, {@code 40s}; null is {@code -}. */
  public static String age(Duration d) {
    if (d == null) {
      return "-";
    }
    if (d.isNegative()) {
      d = Duration.ZERO;
    }
    if (d.toDays() > 0) {
      return d.toDays() + "d " + d.toHoursPart() + "h";
    }
    if (d.toHours() > 0) {
      return d.toHours() + "h " + d.toMinutesPart() + "m";
    }
    if (d.toMinutes() > 0) {
      return d.toMinutes() + "m" + (d.toSecondsPart() > 0 ? " " + d.toSecondsPart() + "s" : "");
    }
    return d.toSeconds() + "s";
  }

  /**
   * The duration of {@code text}: {@code 90s}, {@code 5m}, {@code 2h}, {@code 1d}, {@code 500ms}, a plain number
   * of seconds, or ISO-8601 ({@code PT5M}). The one parser of ages and durations in the console and the
   * {@code converge} command line.
   *
   * @throws IllegalArgumentException naming the text when it is none of these
   */
  public static Duration parseAge(String text) {
    String t = text.trim().toLowerCase(java.util.Locale.ROOT);
    try {
      if (t.matches("[-+]?p.*")) {
        return Duration.parse(t.toUpperCase(java.util.Locale.ROOT));
      }
      if (t.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2).trim()));
      }
      char unit = t.charAt(t.length() - 1);
      if (Character.isDigit(unit)) {
        return Duration.ofSeconds(Long.parseLong(t));
      }
      long n = Long.parseLong(t.substring(0, t.length() - 1).trim());
      return switch (unit) {
        case 's' -> Duration.ofSeconds(n);
        case 'm' -> Duration.ofMinutes(n);
        case 'h' -> Duration.ofHours(n);
        case 'd' -> Duration.ofDays(n);
        default -> throw new IllegalArgumentException("unit " + unit);
      };
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("an age is 90s, 5m, 2h, 1d or ISO-8601, but was " + text, e);
    }
  }
}
