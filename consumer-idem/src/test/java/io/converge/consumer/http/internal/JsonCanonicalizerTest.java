package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.consumer.http.IdempotencyException;
import io.converge.consumer.http.IdempotencyProblem;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonCanonicalizerTest {

  private final JsonCanonicalizer plain = new JsonCanonicalizer(List.of());

  private String canon(JsonCanonicalizer c, String json) {
    return new String(c.canonicalize(json.getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
  }

  @Test
  void membersAreSortedAndWhitespaceDropped() {
    assertThat(canon(plain, " { \"b\" : 1 ,\n \"a\" : { \"y\": true, \"x\": null } } "))
        .isEqualTo(canon(plain, "{\"a\":{\"x\":null,\"y\":true},\"b\":1}"))
        .isEqualTo("{\"a\":{\"x\":null,\"y\":true},\"b\":1e0}");
  }

  @Test
  void numbersAreComparedByValue() {
    assertThat(canon(plain, "{\"amount\":100}")).isEqualTo(canon(plain, "{\"amount\":100.00}"))
        .isEqualTo(canon(plain, "{\"amount\":1e2}")).isEqualTo(canon(plain, "{\"amount\":1.000E+2}"));
    assertThat(canon(plain, "[0, -0, 0.000, 0e10]")).isEqualTo("[0,0,0,0]");
    assertThat(canon(plain, "[12.50]")).isEqualTo(canon(plain, "[12.5]"));
    // a different value stays different, however it is written
    assertThat(canon(plain, "{\"amount\":100}")).isNotEqualTo(canon(plain, "{\"amount\":100.01}"));
    assertThat(canon(plain, "{\"amount\":100}")).isNotEqualTo(canon(plain, "{\"amount\":\"100\"}"));
    assertThat(JsonCanonicalizer.canonicalNumber(new BigDecimal("-1.2300"))).isEqualTo("-123e-2");
  }

  @Test
  void stringsAreReescapedOneWay() {
    assertThat(canon(plain, "[\"A\\u00e9\\/\"]")).isEqualTo(canon(plain, "[\"Aé/\"]")).isEqualTo("[\"Aé/\"]");
    assertThat(canon(plain, "[\"tab\\there \\\"q\\\" \\\\\"]")).isEqualTo("[\"tab\\u0009here \\\"q\\\" \\\\\"]");
  }

  @Test
  void arrayOrderMatters() {
    assertThat(canon(plain, "[1,2]")).isNotEqualTo(canon(plain, "[2,1]"));
  }

  @Test
  void ignoredFieldsAreRemovedByPathThroughArrays() {
    JsonCanonicalizer c = new JsonCanonicalizer(List.of("client_ip", "meta.sent_at", "items.ts"));
    String a = canon(c, "{\"amount\":1,\"client_ip\":\"10.0.0.1\",\"meta\":{\"sent_at\":1,\"src\":\"app\"},"
        + "\"items\":[{\"sku\":\"x\",\"ts\":5},{\"sku\":\"y\",\"ts\":6}]}");
    String b = canon(c,
        "{\"items\":[{\"ts\":99,\"sku\":\"x\"},{\"sku\":\"y\"}],\"meta\":{\"src\":\"app\",\"sent_at\":2},"
            + "\"client_ip\":{\"v6\":\"::1\"},\"amount\":1.0}");
    assertThat(a).isEqualTo(b)
        .isEqualTo("{\"amount\":1e0,\"items\":[{\"sku\":\"x\"},{\"sku\":\"y\"}],\"meta\":{\"src\":\"app\"}}");
    // only at its path: a nested client_ip or a top-level sent_at still counts
    assertThat(canon(c, "{\"x\":{\"client_ip\":1}}")).isEqualTo("{\"x\":{\"client_ip\":1e0}}");
    assertThat(canon(c, "{\"sent_at\":1}")).isEqualTo("{\"sent_at\":1e0}");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "{", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "01", "1.", "-", "1e", "tru", "{\"a\":1} x",
      "\"unterminated", "{\"a\":1,\"a\":2}", "[\"\\x\"]", "[\"\\u12\"]", "{a:1}", "NaN", "[1e999999999999]"})
  void malformedJsonIsRefusedAsBodyInvalid(String json) {
    assertThatThrownBy(() -> plain.canonicalize(json.getBytes(StandardCharsets.UTF_8)))
        .isInstanceOfSatisfying(IdempotencyException.class,
            e -> assertThat(e.problem()).isEqualTo(IdempotencyProblem.BODY_INVALID))
        .hasMessageContaining("Invalid JSON body at offset");
  }

  @Test
  void duplicateOfAnIgnoredMemberIsStillRefused() {
    JsonCanonicalizer c = new JsonCanonicalizer(List.of("ts"));
    assertThatThrownBy(() -> c.canonicalize("{\"ts\":1,\"ts\":2}".getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("duplicate member name \"ts\"");
  }

  @Test
  void invalidUtf8AndDeepNestingAreRefused() {
    assertThatThrownBy(() -> plain.canonicalize(new byte[]{'"', (byte) 0xC3, '"'}))
        .hasMessageContaining("not valid UTF-8");
    assertThatThrownBy(
        () -> plain.canonicalize("[".repeat(100).concat("]".repeat(100)).getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("nested deeper than 64");
  }

  /** Issue 13.11: a 300,000-digit number cost 35 s of CPU in BigDecimal before its 400. */
  @Test
  void aNumberLongerThanJacksonsLimitIsRefusedBeforeItIsParsed() {
    String bomb = "{\"amount\":" + "9".repeat(300_000) + "}";
    assertThatThrownBy(() -> plain.canonicalize(bomb.getBytes(StandardCharsets.UTF_8)))
        .isInstanceOfSatisfying(IdempotencyException.class,
            e -> assertThat(e.problem()).isEqualTo(IdempotencyProblem.BODY_INVALID))
        .hasMessageContaining("offset 10: number longer than 1000 characters (300000)");
    String fraction = "[0." + "1".repeat(200_000) + "e5]";
    assertThatThrownBy(() -> plain.canonicalize(fraction.getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IdempotencyException.class).hasMessageContaining("number longer than 1000 characters");
    // the longest accepted number still means its value
    String longest = "1" + "0".repeat(999);
    assertThat(canon(plain, "[" + longest + "]")).isEqualTo("[1e999]");
    // huge exponents cost nothing (no plain expansion) and a value out of BigDecimal's range is refused
    assertThat(canon(plain, "[1e1000000000]")).isEqualTo("[1e1000000000]");
    assertThatThrownBy(() -> plain.canonicalize("[1e-2147483649]".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IdempotencyException.class).hasMessageContaining("number out of range");
  }

  /** Issue 13.11: a member named NUL + "x" was taken for a removed member and dropped from the fingerprint. */
  @Test
  void memberNamesWithNulAreKeptAndDistinct() {
    assertThat(canon(plain, "{\"\\u0000amount\":5}")).isNotEqualTo(canon(plain, "{\"\\u0000amount\":6}"))
        .isEqualTo("{\"\\u0000amount\":5e0}");
    JsonCanonicalizer ts = new JsonCanonicalizer(List.of("ts"));
    // a real member named NUL + "ts" next to the ignored "ts": neither a duplicate nor dropped
    assertThat(canon(ts, "{\"\\u0000ts\":1,\"ts\":2}")).isEqualTo("{\"\\u0000ts\":1e0}");
    assertThat(canon(ts, "{\"ts\":2,\"\\u0000ts\":1}")).isEqualTo("{\"\\u0000ts\":1e0}");
  }

  /** Issue 13.11: lone surrogates all became ? in UTF-8, so U+D800, U+DBFF and ? fingerprinted alike. */
  @Test
  void loneSurrogatesStayDistinct() {
    String a = canon(plain, "{\"\\ud800\":1}");
    String b = canon(plain, "{\"\\udbff\":1}");
    String q = canon(plain, "{\"?\":1}");
    assertThat(a).isNotEqualTo(b).isNotEqualTo(q).isEqualTo("{\"\\ud800\":1e0}");
    assertThat(canon(plain, "[\"\\udc00x\"]")).isNotEqualTo(canon(plain, "[\"\\udc01x\"]"));
    // a valid pair is one character, however it is written
    assertThat(canon(plain, "[\"\\ud83d\\ude00\"]")).isEqualTo(canon(plain, "[\"\uD83D\uDE00\"]"));
    // and a literal backslash-u text is not an escape
    assertThat(canon(plain, "[\"\\\\ud800\"]")).isNotEqualTo(canon(plain, "[\"\\ud800\"]"));
  }

  @Test
  void badIgnoredFieldPathIsRefusedQuotingIt() {
    assertThatThrownBy(() -> new JsonCanonicalizer(List.of("a..b")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("but was 'a..b'");
  }
}
