package io.converge.consumer.http.internal;

import io.converge.core.internal.Json;
import io.converge.consumer.http.IdempotencyException;
import io.converge.consumer.http.IdempotencyProblem;
import io.converge.core.internal.Require;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Collection;

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
  static final int MAX_DEPTH = Json.MAX_DEPTH;
  /** Jackson's {@code StreamReadConstraints.DEFAULT_MAX_NUM_LEN}. */
  static final int MAX_NUMBER_LENGTH = Json.MAX_NUMBER_LENGTH;

  private final Ignore ignored = new Ignore();

  /** A canonicaliser removing the dotted {@code ignoredFields}. */
  public JsonCanonicalizer(Collection<String> ignoredFields) {
    for (String path : ignoredFields) {
      Require.that(
          path != null && !path.isBlank() && !path.startsWith(".") && !path.endsWith(".") && !path.contains(".."),
          "ignored field", "be a dotted path like meta.client_ip", "'" + path + "'");
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
      throw new IdempotencyException(IdempotencyProblem.BODY_INVALID, "The JSON body is not valid UTF-8", null, null,
          e);
    }
    return CanonicalJsonParser.canonical(text, ignored).getBytes(StandardCharsets.UTF_8);
  }

  /** {@code unscaled e exponent} with trailing zeros stripped: one spelling per numeric value. */
  static String canonicalNumber(BigDecimal value) {
    if (value.signum() == 0) {
      return "0";
    }
    BigDecimal stripped = value.stripTrailingZeros();
    return stripped.unscaledValue() + "e" + (-(long) stripped.scale());
  }
}
