package io.converge.consumer.internal;

import io.converge.consumer.IncomingMessage;
import io.converge.core.Envelope;
import io.converge.core.internal.Text;
import java.nio.charset.StandardCharsets;

/**
 * The one check, before the claim, that the tables can hold what they store of a message: the tenant, the broker key,
 * the topic and the broker's id (the message id is {@link ResolvedId}'s; the other headers are stored
 * percent-encoded and fit whatever they hold). The envelope is written by producers that are not Converge's: a value
 * PostgreSQL refuses (a NUL, an unpaired surrogate, a string longer than its column, a key over the btree entry limit
 * of the index of parked keys) would fail the claim and every record of the failure alike, and an orderly queue would
 * stop behind the message for ever. Such a message is parked instead ({@link #REASON_CODE}). Stateless.
 */
final class EnvelopeCheck {

  /** The reason code of a message parked because its envelope cannot be stored. */
  static final String REASON_CODE = "INVALID_ENVELOPE";

  /** The name the reason gives the broker key (RocketMQ {@code KEYS}, the Pulsar message key). */
  static final String KEY = "message key";

  static final int MAX_TENANT = 64;
  static final int MAX_TOPIC = 255;
  static final int MAX_BROKER_ID = 128;

  /**
   * The broker key's limit in UTF-8 bytes: with the longest group (128), topic (255 characters) and tenant (64)
   * the entry of {@code converge_dlq_parked_key} stays under PostgreSQL's 2,704 bytes.
   */
  static final int MAX_KEY_BYTES = 1024;

  /** How much of an offending value a reason quotes, in characters after escaping. */
  static final int QUOTED = 200;

  private EnvelopeCheck() {
  }

  /**
   * What the tables cannot hold of a message: the field, what is wrong, the value as sent.
   *
   * @param field the header or field ({@code converge-tenant}, {@value EnvelopeCheck#KEY}, {@code topic},
   *     {@code broker id})
   * @param problem what is wrong with it
   * @param value the value as sent; never null
   */
  record Violation(String field, String problem, String value) {

    /**
     * The reason stored and logged: field, problem and the value quoted, escaped and cut to
     * {@value EnvelopeCheck#QUOTED} characters.
     */
    String reason() {
      return field + ": " + problem + ": '" + Text.printable(value, QUOTED) + "'";
    }
  }

  /** The tenant, topic, broker id and key columns of a {@code converge_dlq} row. */
  record Stored(String tenant, String topic, String brokerMessageId, String key) {

    /**
     * The columns for a message that failed the check: each value as sent when it fits, else
     * {@link #printable printable} and cut to its column. The key only when both it and the tenant are valid (then
     * the row holds exactly its own key's line); else null (the later messages of its line fail the check too and
     * are parked in their order).
     */
    static Stored of(IncomingMessage m) {
      boolean tenantValid = textProblem(m.tenant(), MAX_TENANT) == null;
      return new Stored(fit(m.tenant(), MAX_TENANT), fit(m.topic(), MAX_TOPIC),
          m.brokerMessageId() == null ? null : fit(m.brokerMessageId(), MAX_BROKER_ID),
          tenantValid && m.brokerKey() != null && keyProblem(m.brokerKey()) == null ? m.brokerKey() : null);
    }
  }

  /** The first field of {@code message} that the tables cannot hold, or null when all fit. */
  static Violation check(IncomingMessage message) {
    String tenant = message.tenant();
    String problem = textProblem(tenant, MAX_TENANT);
    if (problem != null) {
      return new Violation(Envelope.TENANT, problem, tenant);
    }
    String key = message.brokerKey();
    if (key != null && (problem = keyProblem(key)) != null) {
      return new Violation(KEY, problem, key);
    }
    if ((problem = textProblem(message.topic(), MAX_TOPIC)) != null) {
      return new Violation("topic", problem, message.topic());
    }
    String brokerId = message.brokerMessageId();
    if (brokerId != null && (problem = textProblem(brokerId, MAX_BROKER_ID)) != null) {
      return new Violation("broker id", problem, brokerId);
    }
    return null;
  }

  private static String keyProblem(String key) {
    String problem = textProblem(key, Integer.MAX_VALUE);
    if (problem != null) {
      return problem;
    }
    int bytes = key.getBytes(StandardCharsets.UTF_8).length;
    return bytes > MAX_KEY_BYTES ? bytes + " bytes in UTF-8, at most " + MAX_KEY_BYTES : null;
  }

  /**
   * Why PostgreSQL would refuse {@code s} in a column of {@code max} characters, or null. A loop rather than a
   * regular expression: this runs for every message.
   */
  static String textProblem(String s, int max) {
    int chars = 0;
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == 0) {
        return "contains NUL, which PostgreSQL text cannot hold";
      }
      if (Character.isHighSurrogate(ch) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++; // one character in PostgreSQL
      } else if (Character.isSurrogate(ch)) {
        return "contains an unpaired surrogate at index " + i + ", which UTF-8 cannot encode";
      }
      chars++;
    }
    return chars > max ? chars + " characters, at most " + max : null;
  }

  /** {@code s} as sent when PostgreSQL holds it in a column of {@code max} characters, else printable and cut. */
  private static String fit(String s, int max) {
    return textProblem(s, max) == null ? s : Text.printable(s, max);
  }
}
