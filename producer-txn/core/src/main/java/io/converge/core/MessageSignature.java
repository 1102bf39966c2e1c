package io.converge.core;

import io.converge.core.internal.Text;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The signature of a message ({@link Envelope#SIGNATURE}): HMAC-SHA256 over its canonical form, written once for
 * Converge's producers and consumers and documented for foreign producers (the root README has a test vector).
 *
 * <p>The canonical form, version 1, is the UTF-8 bytes of
 *
 * <pre>
 * "converge-signature-v1" LF
 * topic LF
 * name ":" value LF      for each signed header, in ascending order of name
 * LF
 * </pre>
 *
 * followed by the payload's bytes as sent. LF is the byte 0x0A. The topic is the name the producer gave it (a Pulsar
 * consumer's {@code persistent://tenant/namespace/} prefix and {@code -partition-N} suffix are removed,
 * {@link #topicName}). The signed headers are every header whose name starts with {@code converge-}, but
 * {@link Envelope#SIGNATURE} itself and the {@link #TRANSPORT_HEADERS} a backend adds after the envelope is stamped:
 * the message id, key, tenant, source, creation time and schema as the producer set them, and any {@code converge-}
 * header the application added (the saga's, TCC's). Nothing a broker adds or rewrites is signed (RocketMQ's system
 * properties, Pulsar's key and redelivery count, the broker's message id, a RocketMQ retry topic), nor
 * {@code traceparent}: a relay or a tracer may set them. The header value is
 * {@code v1:<key id>:<MAC as 64 lower-case hex digits>}.
 *
 * <p>Signing and verifying refuse what would make the form ambiguous: a {@code converge-} header whose name does not
 * match {@code converge-[a-z0-9._-]{1,55}} (no {@code :}), a line break in a signed value or in the topic. Stateless
 * and thread-safe.
 */
public final class MessageSignature {

  /** The first line of the canonical form, version 1. */
  public static final String FORM_V1 = "converge-signature-v1";

  /**
   * The {@code converge-} headers a backend adds to each send after the envelope is signed, so never signed:
   * {@code converge-attempt}, the RocketMQ half message's attempt token (a new one per send).
   */
  public static final Set<String> TRANSPORT_HEADERS = Set.of("converge-attempt");

  private static final String PREFIX = "converge-";
  private static final Pattern SIGNED_NAME = Pattern.compile("converge-[a-z0-9._-]{1,55}");
  private static final Pattern VALUE = Pattern.compile("v1:(" + SigningKey.ID.pattern() + "):([0-9a-f]*)");
  private static final Pattern PARTITION = Pattern.compile("-partition-[0-9]+$");
  private static final int MAC_HEX = 64;
  private static final int QUOTED = 100;

  private MessageSignature() {
  }

  /**
   * The canonical form of a message, version 1 (see the class documentation).
   *
   * @param topic the topic as the producer named it
   * @param headers every header of the message (those not signed are skipped)
   * @param payload the payload as sent
   * @throws InvalidSignatureException when a signed header's name or value, or the topic, would make it ambiguous
   */
  public static byte[] canonicalForm(String topic, Map<String, String> headers, byte[] payload) {
    StringBuilder text = new StringBuilder(FORM_V1).append('\n');
    text.append(line("topic", topic)).append('\n');
    Map<String, String> signed = new TreeMap<>();
    headers.forEach((name, value) -> {
      if (name.startsWith(PREFIX) && !name.equals(Envelope.SIGNATURE) && !TRANSPORT_HEADERS.contains(name)) {
        if (!SIGNED_NAME.matcher(name).matches()) {
          throw new InvalidSignatureException("malformed: header name '" + quote(name) + "' starts with " + PREFIX
              + " but does not match " + SIGNED_NAME.pattern(), headers.get(Envelope.MESSAGE_ID));
        }
        signed.put(name, line(name, value));
      }
    });
    signed.forEach((name, value) -> text.append(name).append(':').append(value).append('\n'));
    text.append('\n');
    ByteArrayOutputStream out = new ByteArrayOutputStream(text.length() + payload.length);
    out.writeBytes(text.toString().getBytes(StandardCharsets.UTF_8));
    out.writeBytes(payload);
    return out.toByteArray();
  }

  /**
   * The {@link Envelope#SIGNATURE} value of a message, signed with {@code keys.current()}.
   *
   * @param topic the topic as the producer names it
   * @param headers every header the message will carry (a {@link Envelope#SIGNATURE} among them is ignored)
   * @param payload the payload, not empty
   * @throws InvalidMessageException when the payload is empty (a consumer refuses a signature without a body)
   */
  public static String sign(SigningKeys keys, String topic, Map<String, String> headers, byte[] payload) {
    if (payload.length == 0) {
      throw new InvalidMessageException("message.payload must not be empty on a signed message (consumers refuse a"
          + " signature on a message without a body), but was 0 bytes", headers.get(Envelope.MESSAGE_ID), null);
    }
    SigningKey key = keys.current();
    if (key == null) {
      throw new ConvergeException("SigningKeys " + keys + " returned no current key", headers.get(Envelope.MESSAGE_ID),
          null);
    }
    return "v1:" + key.id() + ":" + HexFormat.of().formatHex(key.mac(canonicalForm(topic, headers, payload)));
  }

  /**
   * Verifies a received message's {@link Envelope#SIGNATURE} with the active keys.
   *
   * @param topic the topic as the consumer sees it ({@link #topicName} is applied)
   * @throws InvalidSignatureException quoting why: no signature, a malformed or truncated one, an unknown or retired
   *     key id, a signature on a message without a body, a MAC mismatch
   */
  public static void verify(SigningKeys keys, String topic, Map<String, String> headers, byte[] payload) {
    String id = headers.get(Envelope.MESSAGE_ID);
    String value = headers.get(Envelope.SIGNATURE);
    if (value == null) {
      throw new InvalidSignatureException("unsigned: no " + Envelope.SIGNATURE + " header", id);
    }
    Matcher m = VALUE.matcher(value);
    if (!m.matches()) {
      throw new InvalidSignatureException("malformed " + Envelope.SIGNATURE + ", not v1:<key id>:<64 hex digits>: '"
          + quote(value) + "'", id);
    }
    if (m.group(2).length() != MAC_HEX) {
      throw new InvalidSignatureException("truncated " + Envelope.SIGNATURE + ": " + m.group(2).length()
          + " hex digits, expected " + MAC_HEX + ": '" + quote(value) + "'", id);
    }
    if (payload.length == 0) {
      throw new InvalidSignatureException("signature on a message without a body: '" + quote(value) + "'", id);
    }
    SigningKey key = keys.active(m.group(1));
    if (key == null) {
      throw new InvalidSignatureException("unknown or retired key id '" + m.group(1) + "'", id);
    }
    byte[] expected = key.mac(canonicalForm(topicName(topic), headers, payload));
    if (!MessageDigest.isEqual(expected, HexFormat.of().parseHex(m.group(2)))) {
      throw new InvalidSignatureException("MAC mismatch for key id '" + key.id() + "': the topic, a converge-"
          + " header or the payload differs from what was signed", id);
    }
  }

  /**
   * The topic as its producer named it, from the name a consumer sees: a Pulsar topic's local name, without
   * {@code persistent://tenant/namespace/} (or {@code non-persistent://…}) and without a partition's
   * {@code -partition-N}; any other name as it is.
   */
  public static String topicName(String topic) {
    if (!topic.contains("://")) {
      return topic;
    }
    String local = topic.substring(topic.lastIndexOf('/') + 1);
    return PARTITION.matcher(local).replaceFirst("");
  }

  private static String line(String what, String value) {
    if (value == null || value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0) {
      throw new InvalidSignatureException("malformed: " + what + " " + (value == null ? "is null"
          : "holds a line break: '" + quote(value) + "'"), null);
    }
    return value;
  }

  private static String quote(String s) {
    return Text.printable(s, QUOTED);
  }
}
