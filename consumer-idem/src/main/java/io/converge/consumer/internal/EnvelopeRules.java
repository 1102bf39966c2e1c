package io.converge.consumer.internal;

import io.converge.core.internal.Text;
import io.converge.consumer.IncomingMessage;
import io.converge.core.Envelope;
import io.converge.core.InvalidMessageException;
import io.converge.core.InvalidSignatureException;
import io.converge.core.MessageSignature;
import io.converge.core.SchemaVersion;
import io.converge.core.SigningKeys;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What a handler accepts of an envelope beyond what the tables can hold ({@link EnvelopeCheck}): a valid signature
 * ({@link #SIGNATURE_INVALID}, checked on arrival, before the claim: the id of a forged message is not trusted, so
 * nothing is claimed), an age within the replay window ({@link #REPLAYED}, on arrival; parking claims the id first, so
 * a copy the dedup table still knows is a plain duplicate), a schema major the handler reads
 * ({@link #SCHEMA_UNSUPPORTED}, checked by {@link GroupSetup#handle} on every way into the handler: a first
 * delivery, a held message released, a resume or re-drive, so that the upgraded handler runs what the old one parked).
 * Immutable and thread-safe; Converge-internal (built by {@code IdempotentHandler.Builder}).
 */
public final class EnvelopeRules {

  /** The reason code of a message without a valid signature: it never runs, and cannot be re-driven. */
  public static final String SIGNATURE_INVALID = "SIGNATURE_INVALID";
  /** The reason code of a message created before the replay window or after the clock-skew tolerance. */
  public static final String REPLAYED = "REPLAYED";
  /** The reason code of a message whose schema (type or major version) the handler does not read, or malformed. */
  public static final String SCHEMA_UNSUPPORTED = "SCHEMA_UNSUPPORTED";

  /** No rule: every envelope is accepted. */
  public static final EnvelopeRules NONE = new EnvelopeRules(null, null, null, Map.of(), false);

  private final SigningKeys keys;
  private final Duration maxAge;
  private final Duration clockSkew;
  private final Map<String, Set<Integer>> accepted;
  private final boolean requireSchema;

  /**
   * Validated by the builder.
   *
   * @param keys the keys verifying signatures; null accepts unsigned messages
   * @param maxAge the replay window; null for none
   * @param clockSkew how far in the future a creation time may be; used with {@code maxAge}
   * @param accepted the schema majors accepted, by type; empty reads no schema header
   * @param requireSchema whether a message without schema header is refused
   */
  public EnvelopeRules(SigningKeys keys, Duration maxAge, Duration clockSkew, Map<String, Set<Integer>> accepted,
      boolean requireSchema) {
    this.keys = keys;
    this.maxAge = maxAge;
    this.clockSkew = clockSkew;
    Map<String, Set<Integer>> copy = new TreeMap<>();
    accepted.forEach((type, majors) -> copy.put(type, Set.copyOf(majors)));
    this.accepted = Collections.unmodifiableMap(copy);
    this.requireSchema = requireSchema;
  }

  /** The refusal of a message whose signature does not verify, or null (also when no signature is required). */
  RejectedMessage signature(IncomingMessage m) {
    if (keys == null) {
      return null;
    }
    try {
      MessageSignature.verify(keys, m.topic(), m.headers(), m.payload());
      return null;
    } catch (InvalidSignatureException e) {
      return new RejectedMessage(SIGNATURE_INVALID, e.getMessage(), m.envelopeMessageId(), false);
    }
  }

  /** The refusal of a message created outside the replay window at {@code now}, or null. */
  RejectedMessage age(IncomingMessage m, Instant now) {
    if (maxAge == null) {
      return null;
    }
    String text = m.header(Envelope.CREATED_AT);
    String problem;
    if (text == null) {
      problem = "no " + Envelope.CREATED_AT + " header: its age cannot be checked against the replay window";
    } else {
      long millis;
      try {
        millis = Long.parseLong(text);
      } catch (NumberFormatException e) {
        return replayed(m, Envelope.CREATED_AT + " is not epoch milliseconds: '"
            + Text.printable(text, EnvelopeCheck.QUOTED) + "'");
      }
      Duration age = Duration.between(Instant.ofEpochMilli(millis), now);
      problem = age.compareTo(maxAge) > 0
          ? "created at " + Instant.ofEpochMilli(millis) + " (" + Envelope.CREATED_AT + " '" + text + "'), " + age
              + " before it arrived, over the replay window of " + maxAge
          : age.negated().compareTo(clockSkew) > 0
              ? "created at " + Instant.ofEpochMilli(millis) + " (" + Envelope.CREATED_AT + " '" + text + "'), "
                  + age.negated() + " in the future, over the clock-skew tolerance of " + clockSkew
              : null;
    }
    return problem == null ? null : replayed(m, problem);
  }

  private static RejectedMessage replayed(IncomingMessage m, String reason) {
    return new RejectedMessage(REPLAYED, reason, m.envelopeMessageId(), true);
  }

  /** Refuses a message whose schema this handler does not read. @throws RejectedMessage naming the schema */
  void checkSchema(IncomingMessage m) {
    if (accepted.isEmpty()) {
      return;
    }
    String header = m.header(Envelope.SCHEMA);
    if (header == null) {
      if (requireSchema) {
        throw unsupported(m, "no " + Envelope.SCHEMA + " header, and this consumer requires one (it reads "
            + readable() + ")");
      }
      return;
    }
    SchemaVersion schema;
    try {
      schema = SchemaVersion.parse(header);
    } catch (InvalidMessageException e) {
      throw unsupported(m, "malformed: " + Envelope.SCHEMA + " must be <type>/<major>.<minor>, but was '"
          + Text.printable(header, EnvelopeCheck.QUOTED) + "'");
    }
    Set<Integer> majors = accepted.get(schema.type());
    if (majors == null || !majors.contains(schema.major())) {
      throw unsupported(m, "'" + schema + "': " + (majors == null ? "type '" + schema.type() + "'"
          : "major version " + schema.major()) + " not read by this consumer (it reads " + readable() + ")");
    }
  }

  private RejectedMessage unsupported(IncomingMessage m, String reason) {
    return new RejectedMessage(SCHEMA_UNSUPPORTED, reason, m.envelopeMessageId(), true);
  }

  private String readable() {
    return accepted.entrySet().stream().flatMap(e -> e.getValue().stream().sorted().map(v -> e.getKey() + "/" + v
        + ".x")).collect(Collectors.joining(", "));
  }
}
