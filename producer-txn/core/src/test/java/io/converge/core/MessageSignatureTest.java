package io.converge.core;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link MessageSignature}: the README's test vector (a foreign producer's implementation is checked against it),
 * rotation through {@link SigningKeys}, and every reason a signature is refused, quoted.
 */
class MessageSignatureTest {

  /** The README's test vector: key {@code k1}, the secret's 32 bytes are this ASCII text. */
  static final byte[] SECRET = "converge-test-vector-key-32bytes".getBytes(UTF_8);
  static final String TOPIC = "order-created";
  static final byte[] PAYLOAD = "{\"orderId\":\"42\",\"amount\":\"10.00\"}".getBytes(UTF_8);
  static final String EXPECTED = "v1:k1:a84f747c5eafcd404bfb33740ee441410e4a91c0904a5ba1b2f1c57aa768b4e8";

  static Map<String, String> vectorHeaders() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put(Envelope.MESSAGE_ID, "0190a6b8-7c1e-7d3a-9f00-5b2e4c6d8e10");
    h.put(Envelope.KEY, "order-42");
    h.put(Envelope.TENANT, "default");
    h.put(Envelope.SOURCE, "order-service");
    h.put(Envelope.CREATED_AT, "1767225600000");
    h.put(Envelope.SCHEMA, "order-created/2.1");
    h.put(Envelope.TRACEPARENT, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    h.put("note", "not signed");
    return h;
  }

  private static final SigningKeys K1 = SigningKeys.of("k1", Map.of("k1", SECRET));

  @Test
  void theReadmeTestVector() {
    assertThat(new String(MessageSignature.canonicalForm(TOPIC, vectorHeaders(), PAYLOAD), UTF_8)).isEqualTo("""
        converge-signature-v1
        order-created
        converge-created-at:1767225600000
        converge-key:order-42
        converge-message-id:0190a6b8-7c1e-7d3a-9f00-5b2e4c6d8e10
        converge-schema:order-created/2.1
        converge-source:order-service
        converge-tenant:default

        {"orderId":"42","amount":"10.00"}""");
    assertThat(MessageSignature.sign(K1, TOPIC, vectorHeaders(), PAYLOAD)).isEqualTo(EXPECTED);
    Map<String, String> received = vectorHeaders();
    received.put(Envelope.SIGNATURE, EXPECTED);
    received.put(Envelope.TRACEPARENT, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    received.put("note", "rewritten by a relay");
    received.put("converge-attempt", "9f3c0a1b2c3d4e5f"); // the RocketMQ backend's, added after signing
    MessageSignature.verify(K1, TOPIC, received, PAYLOAD); // unsigned headers may change
    MessageSignature.verify(K1, "persistent://public/default/order-created-partition-3", received, PAYLOAD);
  }

  @Test
  void signsWithTheCurrentKeyAndVerifiesWithAnyActiveOne() {
    byte[] other = "another-secret-of-thirty-two-byt".getBytes(UTF_8);
    SigningKeys before = SigningKeys.of("k1", Map.of("k1", SECRET));
    SigningKeys during = SigningKeys.of("k2", Map.of("k1", SECRET, "k2", other));
    SigningKeys after = SigningKeys.of("k2", Map.of("k2", other));
    Map<String, String> old = signed(before);
    Map<String, String> fresh = signed(during);
    assertThat(fresh.get(Envelope.SIGNATURE)).startsWith("v1:k2:");
    MessageSignature.verify(during, TOPIC, old, PAYLOAD);
    MessageSignature.verify(during, TOPIC, fresh, PAYLOAD);
    assertThatThrownBy(() -> MessageSignature.verify(after, TOPIC, old, PAYLOAD))
        .isInstanceOf(InvalidSignatureException.class).hasMessage("unknown or retired key id 'k1'");
  }

  @Test
  void everyRefusalQuotesItsReason() {
    Map<String, String> h = signed(K1);
    assertThat(refusal(K1, TOPIC, without(h, Envelope.SIGNATURE), PAYLOAD)).isEqualTo(
        "unsigned: no converge-signature header");
    assertThat(refusal(K1, TOPIC, with(h, Envelope.SIGNATURE, EXPECTED.substring(0, 40)), PAYLOAD))
        .startsWith("truncated converge-signature: 34 hex digits, expected 64: 'v1:k1:a84f");
    assertThat(refusal(K1, TOPIC, with(h, Envelope.SIGNATURE, "sha1=abc"), PAYLOAD))
        .isEqualTo("malformed converge-signature, not v1:<key id>:<64 hex digits>: 'sha1=abc'");
    assertThat(refusal(K1, TOPIC, with(h, Envelope.SIGNATURE, EXPECTED.replace("v1:k1", "v1:k9")), PAYLOAD))
        .isEqualTo("unknown or retired key id 'k9'");
    assertThat(refusal(K1, TOPIC, h, new byte[0])).startsWith("signature on a message without a body: 'v1:k1:");
    assertThat(refusal(K1, TOPIC, with(h, Envelope.KEY, "order-43"), PAYLOAD)).startsWith("MAC mismatch");
    assertThat(refusal(K1, TOPIC, with(h, "converge-extra", "added"), PAYLOAD)).startsWith("MAC mismatch");
    assertThat(refusal(K1, "refund-approved", h, PAYLOAD)).startsWith("MAC mismatch");
    assertThat(refusal(K1, TOPIC, h, "{\"orderId\":\"43\"}".getBytes(UTF_8))).startsWith("MAC mismatch");
    assertThat(refusal(K1, TOPIC, with(h, "converge-key:order", "42"), PAYLOAD))
        .startsWith("malformed: header name 'converge-key:order'");
    assertThat(refusal(K1, TOPIC, with(h, Envelope.KEY, "a\nconverge-x:y"), PAYLOAD))
        .isEqualTo("malformed: converge-key holds a line break: 'a\\u000aconverge-x:y'");
  }

  @Test
  void aMessageWithoutBodyIsNotSignedAndKeysAreValidated() {
    assertThatThrownBy(() -> MessageSignature.sign(K1, TOPIC, vectorHeaders(), new byte[0]))
        .isInstanceOf(InvalidMessageException.class).hasMessageContaining("must not be empty on a signed message");
    assertThatThrownBy(() -> SigningKeys.of("k1", Map.of("k:1", SECRET)))
        .hasMessage("signing.key.id must match [A-Za-z0-9._-]{1,64}, but was 'k:1'");
    assertThatThrownBy(() -> SigningKeys.of("k1", Map.of("k1", new byte[16])))
        .hasMessage("signing.key 'k1' secret must be at least 32 bytes, but was 16 bytes");
    assertThatThrownBy(() -> SigningKeys.of("k2", Map.of("k1", SECRET)))
        .hasMessage("signing.currentKeyId must be one of [k1], but was 'k2'");
    assertThat(SigningKey.of("k1", SECRET)).hasToString("SigningKey[k1]");
  }

  @Test
  void schemaHeaderSyntax() {
    assertThat(SchemaVersion.parse("order-created/2.1")).isEqualTo(new SchemaVersion("order-created", 2, 1));
    assertThat(new SchemaVersion("com.acme.Order_v", 0, 12)).hasToString("com.acme.Order_v/0.12");
    for (String bad : new String[]{"order-created", "order-created/2", "order-created/02.1", "/2.1", "a b/1.0",
        "order-created/2.1.0", "order-created/1234567890.0", "-x/1.0"}) {
      assertThatThrownBy(() -> SchemaVersion.parse(bad)).as(bad).isInstanceOf(InvalidMessageException.class)
          .hasMessageEndingWith("but was '" + bad + "'");
    }
    assertThatThrownBy(() -> new SchemaVersion("order-created", -1, 0))
        .hasMessageContaining("but was -1.0");
  }

  private static Map<String, String> signed(SigningKeys keys) {
    Map<String, String> h = vectorHeaders();
    h.put(Envelope.SIGNATURE, MessageSignature.sign(keys, TOPIC, h, PAYLOAD));
    return h;
  }

  private static Map<String, String> with(Map<String, String> h, String name, String value) {
    Map<String, String> copy = new LinkedHashMap<>(h);
    copy.put(name, value);
    return copy;
  }

  private static Map<String, String> without(Map<String, String> h, String name) {
    Map<String, String> copy = new LinkedHashMap<>(h);
    copy.remove(name);
    return copy;
  }

  private static String refusal(SigningKeys keys, String topic, Map<String, String> h, byte[] payload) {
    try {
      MessageSignature.verify(keys, topic, h, payload);
    } catch (InvalidSignatureException e) {
      return e.getMessage();
    }
    throw new AssertionError("verified");
  }
}
