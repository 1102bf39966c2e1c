package io.converge.core.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;

/**
 * The one JSON reader and string writer of Converge's modules: a Jackson streaming parser (jackson-core only, JSON's
 * own whitespace and grammar, bounded nesting and number length) and the one way to write a JSON string. Callers
 * build their own documents on it (the Idempotency-Key filter's RFC 8785 canonical form, the stuck webhook's
 * payload, problem details). Stateless and thread-safe; a parser it returns belongs to one thread.
 */
public final class Json {

  /** The deepest nesting of objects and arrays a parser accepts. */
  public static final int MAX_DEPTH = 64;
  /** The most characters a number may have. */
  public static final int MAX_NUMBER_LENGTH = 1000;

  private static final JsonFactory FACTORY = JsonFactory.builder()
      .streamReadConstraints(
          StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).maxNumberLength(MAX_NUMBER_LENGTH).build())
      .build();

  private Json() {
  }

  /**
   * A parser of {@code json}; the caller closes it. Malformed input, nesting deeper than {@link #MAX_DEPTH} or a
   * number longer than {@link #MAX_NUMBER_LENGTH} fail with an {@link IOException} when read.
   */
  public static JsonParser parser(String json) throws IOException {
    return FACTORY.createParser(json);
  }

  /**
   * Appends {@code text} to {@code out} as a JSON string: {@code "} and {@code \} escaped with a backslash, control
   * characters below U+0020 and unpaired surrogates as {@code \}{@code uXXXX} (lowercase hex; an unpaired surrogate
   * has no UTF-8 form and would become {@code ?}: escaped, it stays itself), everything else as it is. This is the
   * form the Idempotency-Key filter's canonical JSON fingerprints, so it must not change.
   *
   * @return {@code out}
   */
  public static StringBuilder quote(StringBuilder out, String text) {
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char ch = text.charAt(i);
      if (ch == '"' || ch == '\\') {
        out.append('\\').append(ch);
      } else if (ch < 0x20 || loneSurrogate(text, i)) {
        out.append(String.format("\\u%04x", (int) ch));
      } else {
        out.append(ch);
      }
    }
    return out.append('"');
  }

  private static boolean loneSurrogate(String text, int i) {
    char ch = text.charAt(i);
    if (Character.isHighSurrogate(ch)) {
      return i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1));
    }
    return Character.isLowSurrogate(ch) && (i == 0 || !Character.isHighSurrogate(text.charAt(i - 1)));
  }
}
