package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.consumer.http.CallbackException;
import io.converge.consumer.http.CallbackProblem;
import io.converge.consumer.http.SignedCallbackFilter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The callback signature scheme against the README's fixed test vector, and every malformed header. */
class CallbackSignatureTest {

  /** The README's test vector (consumer-idem README, "Signed callbacks"). */
  static final byte[] SECRET = bytes("whsec_converge_test");
  static final byte[] OLD_SECRET = bytes("whsec_previous");
  static final byte[] BODY = bytes("{\"id\":\"evt_1\",\"type\":\"charge.succeeded\"}");
  static final String V1 = "46c5c43397f7a29aa2c192cd8029df005571b5e5e2c71a16ee143688312a83ee";
  static final String V1_OLD = "5fedb170fc8d63377773ac05c8f2b6b860cf86452a854b5f4a52bddb41510c45";
  static final String DIGEST = "395fce28416a93f78ff94fd04c3595377788977a4275960a1fae79341b3a826b";

  @Test
  void signsTheTestVector() {
    assertThat(SignedCallbackFilter.sign(SECRET, 1_700_000_000L, BODY)).isEqualTo("t=1700000000,v1=" + V1);
  }

  @Test
  void verifiesTheTestVectorAndItsDigest() {
    CallbackSignature s = CallbackSignature.parse("Converge-Signature", "t=1700000000,v1=" + V1);
    assertThat(s.timestamp()).isEqualTo(1_700_000_000L);
    assertThat(s.matchesAny(List.of(SECRET), BODY)).isTrue();
    assertThat(s.digest(BODY)).isEqualTo(DIGEST);
  }

  @Test
  void anotherBodyTimestampOrSecretDoesNotVerify() {
    CallbackSignature s = CallbackSignature.parse("H", "t=1700000000,v1=" + V1);
    assertThat(s.matchesAny(List.of(SECRET), bytes("{\"id\":\"evt_1\",\"type\":\"charge.failed\"}"))).isFalse();
    assertThat(s.matchesAny(List.of(OLD_SECRET), BODY)).isFalse();
    assertThat(CallbackSignature.parse("H", "t=1700000001,v1=" + V1).matchesAny(List.of(SECRET), BODY)).isFalse();
  }

  @Test
  void rotationAnyV1UnderAnyActiveSecretVerifies() {
    // the provider signs with both secrets while it rolls over; entries of other schemes are ignored
    String both = "t=1700000000, v0=abc, v1=" + V1_OLD + ", v1=" + V1.toUpperCase();
    CallbackSignature s = CallbackSignature.parse("H", both);
    assertThat(s.matchesAny(List.of(SECRET), BODY)).isTrue();
    assertThat(s.matchesAny(List.of(bytes("whsec_next"), OLD_SECRET), BODY)).isTrue();
    assertThat(s.matchesAny(List.of(bytes("whsec_next")), BODY)).isFalse();
    // the key does not depend on which entries or secret signed it
    assertThat(s.digest(BODY)).isEqualTo(DIGEST);
  }

  @Test
  void malformedHeadersAreRefusedQuotingWhatIsWrong() {
    assertMalformed("v1=" + V1, "must have a t=<unix seconds> entry, but has none");
    assertMalformed("t=1700000000", "must have at least one v1=");
    assertMalformed("t=1700000000,t=1700000001,v1=" + V1, "one t entry, but has several");
    assertMalformed("t=17e8,v1=" + V1, "t must be unix seconds (1 to 12 digits), but was '17e8'");
    assertMalformed("t=-5,v1=" + V1, "but was '-5'");
    assertMalformed("t=1700000000,v1=" + V1.substring(2), "v1 must be 64 hex digits (HMAC-SHA256), but entry 1 was '");
    assertMalformed("t=1700000000,v1=" + V1 + ",v1=zz", "but entry 2 was 'zz'");
    assertMalformed("t=1700000000;v1=" + V1, "t must be unix seconds (1 to 12 digits), but was '1700000000;v1=");
    assertMalformed("t=1700000000,,v1=" + V1, "but has ''");
    assertMalformed("garbage\u0001", "but has 'garbage\\u0001'");
    assertMalformed("t=1,v1=" + V1 + ",v1=" + V1 + ",v1=" + V1 + ",v1=" + V1 + ",v1=" + V1 + ",v1=" + V1 + ",v1=" + V1
        + ",v1=" + V1 + ",v1=" + V1, "at most 8 v1 entries");
    assertMalformed("x".repeat(2049), "at most 2048 characters, but had 2049");
  }

  private static void assertMalformed(String header, String detail) {
    assertThatThrownBy(() -> CallbackSignature.parse("Converge-Signature", header))
        .isInstanceOfSatisfying(CallbackException.class,
            e -> assertThat(e.problem()).isEqualTo(CallbackProblem.SIGNATURE_MALFORMED))
        .hasMessageStartingWith("Converge-Signature").hasMessageContaining(detail);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
