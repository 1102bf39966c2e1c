package io.converge.consumer;

import static io.converge.consumer.Db.count;
import static io.converge.consumer.Db.string;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.core.Envelope;
import io.converge.core.Migrations;
import io.converge.core.MessageSignature;
import io.converge.core.SigningKeys;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code IdempotentHandler.Builder.requireSignature}: an unsigned or wrongly signed message is parked
 * {@code SIGNATURE_INVALID} with its reason quoted, never runs, claims nothing (a forged copy cannot suppress the
 * genuine message of its id), holds its key, and can be neither re-driven nor resumed, only discarded; a message
 * created outside the replay window is parked {@code REPLAYED} on top of dedup (a copy the dedup table knows stays a
 * duplicate) and ops may re-drive it.
 */
@ExtendWith(PostgresExtension.class)
class SignedEnvelopeIT {

  static final String TOPIC = "payments";
  static final SigningKeys KEYS = SigningKeys.of("k1",
      Map.of("k1", "0123456789abcdef0123456789abcdef".getBytes(UTF_8)));
  static final SigningKeys FORGER = SigningKeys.of("k1",
      Map.of("k1", "an attacker's key, 32 bytes long!".getBytes(UTF_8)));
  static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

  /** A message of {@code key} created at {@code createdAt}, signed with {@code keys} (unsigned when null). */
  static IncomingMessage signed(SigningKeys keys, String id, String key, Instant createdAt, String body,
      String... extraHeaders) {
    Map<String, String> h = new LinkedHashMap<>();
    h.put(Envelope.MESSAGE_ID, id);
    h.put(Envelope.KEY, key);
    h.put(Envelope.CREATED_AT, Long.toString(createdAt.toEpochMilli()));
    for (int i = 0; i < extraHeaders.length; i += 2) {
      h.put(extraHeaders[i], extraHeaders[i + 1]);
    }
    byte[] payload = body.getBytes(UTF_8);
    if (keys != null) {
      h.put(Envelope.SIGNATURE, MessageSignature.sign(keys, TOPIC, h, payload));
    }
    return IncomingMessage.builder().topic(TOPIC).headers(h).brokerKey(key).payload(payload).build();
  }

  private static IncomingMessage with(IncomingMessage m, String header, String value, String body) {
    return IncomingMessage.builder().topic(m.topic()).headers(m.headers()).header(header, value)
        .brokerKey(m.brokerKey())
        .payload(body.getBytes(UTF_8)).build();
  }

  private static String parked(DataSource ds, String group, String id) {
    return string(ds, "SELECT reason_code || ' ' || reason FROM converge_dlq WHERE consumer_group = '" + group
        + "' AND message_id = '" + id + "' AND status = 'PARKED'");
  }

  @Test
  void anUnsignedOrWronglySignedMessageIsParkedNeverRunAndNeverReDriven(DataSource ds) throws Exception {
    Migrations.apply(ds, "consumer");
    List<String> ran = new CopyOnWriteArrayList<>();
    List<String> counted = new CopyOnWriteArrayList<>();
    ConsumerMetrics metrics = new ConsumerMetrics() {

      @Override
      public void outcome(String group, String topic, Outcome outcome) {
      }

      @Override
      public void parked(String group, String topic, String reasonCode) {
        counted.add(reasonCode);
      }
    };
    IdempotentHandler handler = IdempotentHandler.builder().group("signed").dataSource(ds).requireSignature(KEYS)
        .metrics(metrics).clock(Clock.fixed(NOW, ZoneOffset.UTC)).handler((c, m) -> ran.add(m.envelopeMessageId()))
        .build();
    IncomingMessage good = signed(KEYS, "good-1", "acct-1", NOW, "{\"amount\":10}");
    assertThat(handler.handle(good)).isEqualTo(Outcome.PROCESSED);

    assertThat(handler.handle(signed(null, "unsigned-1", "acct-2", NOW, "{}"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(parked(ds, "signed", "unsigned-1"))
        .isEqualTo("SIGNATURE_INVALID unsigned: no converge-signature header");
    String sig = good.header(Envelope.SIGNATURE);
    assertThat(handler.handle(with(signed(null, "truncated-1", "acct-3", NOW, "{}"), Envelope.SIGNATURE,
        sig.substring(0, 30), "{}"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(parked(ds, "signed", "truncated-1"))
        .startsWith("SIGNATURE_INVALID truncated converge-signature: 24 hex digits, expected 64: 'v1:k1:");
    assertThat(handler.handle(with(good, Envelope.SIGNATURE, sig.replace("v1:k1:", "v1:k0:"), "{\"amount\":10}")))
        .isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(handler.handle(with(signed(KEYS, "empty-1", "acct-5", NOW, "{}"), "x", "y", "")))
        .isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(parked(ds, "signed", "empty-1")).startsWith("SIGNATURE_INVALID signature on a message without a body:");
    assertThat(string(ds, "SELECT string_agg(reason, ' | ' ORDER BY id) FROM converge_dlq WHERE message_id = 'good-1'"))
        .isEqualTo("unknown or retired key id 'k0'");

    // a forged copy of a genuine message that has not arrived yet: parked, nothing claimed, the genuine one runs
    IncomingMessage genuine = signed(KEYS, "pay-7", "acct-7", NOW, "{\"amount\":70}");
    IncomingMessage forged = with(genuine, Envelope.KEY, "acct-7", "{\"amount\":7000}");
    IncomingMessage forgedOnItsOwnKey = IncomingMessage.builder().topic(TOPIC).headers(forged.headers())
        .brokerKey("acct-8").payload(forged.payload()).build();
    assertThat(handler.handle(forgedOnItsOwnKey)).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(parked(ds, "signed", "pay-7")).startsWith("SIGNATURE_INVALID MAC mismatch for key id 'k1'");
    assertThat(handler.handle(genuine)).as("the forged copy claimed nothing").isEqualTo(Outcome.PROCESSED);
    assertThat(handler.handle(signed(FORGER, "pay-9", "acct-9", NOW, "{}"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(ran).containsExactly("good-1", "pay-7");
    assertThat(handler.handle(signed(KEYS, "week-old", "acct-10", NOW.minus(Duration.ofDays(7)), "{}")))
        .as("the default replay window: 7 days less 5 min").isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(parked(ds, "signed", "week-old")).startsWith("REPLAYED created at 2026-11-24T12:00:00Z")
        .endsWith("over the replay window of PT167H55M");
    assertThat(counted).as("consumer.parked per parked message").containsExactly("SIGNATURE_INVALID",
        "SIGNATURE_INVALID", "SIGNATURE_INVALID", "SIGNATURE_INVALID", "SIGNATURE_INVALID", "SIGNATURE_INVALID",
        "REPLAYED");

    // the key is held behind the forged message, which can only be discarded
    IncomingMessage next = signed(KEYS, "unsigned-2", "acct-2", NOW, "{\"amount\":2}");
    assertThat(handler.handle(next)).isEqualTo(Outcome.HELD);
    long forgedRow = count(ds, "SELECT id FROM converge_dlq WHERE message_id = 'unsigned-1'");
    ConsumerOps ops = ConsumerOps.of(ds);
    assertThat(ops.redrive(forgedRow)).as("a forged message is never re-driven").isFalse();
    assertThatThrownBy(() -> handler.resume(forgedRow)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("failed its signature check and never runs");
    assertThat(ran).containsExactly("good-1", "pay-7");
    assertThat(ops.discard(forgedRow)).isTrue();
    assertThat(handler.releaseHeld(List.of(TOPIC))).isOne();
    assertThat(ran).containsExactly("good-1", "pay-7", "unsigned-2");
    assertThat(string(ds, "SELECT string_agg(message_id || ' ' || outcome, ', ' ORDER BY message_id)"
        + " FROM converge_dedup WHERE consumer_group = 'signed'"))
        .as("claims of the three that ran and of the replayed one; none of a forged one")
        .isEqualTo("good-1 PROCESSED, pay-7 PROCESSED, unsigned-2 PROCESSED, week-old DEAD_LETTERED");
  }

  @Test
  void aMessageOutsideTheReplayWindowIsParkedOnTopOfDedupAndOpsMayReDriveIt(DataSource ds) throws Exception {
    Migrations.apply(ds, "consumer");
    List<String> ran = new CopyOnWriteArrayList<>();
    IdempotentHandler handler = IdempotentHandler.builder().group("replay").dataSource(ds).requireSignature(KEYS)
        .replayWindow(Duration.ofHours(1), Duration.ofMinutes(2)).clock(Clock.fixed(NOW, ZoneOffset.UTC))
        .handler((c, m) -> ran.add(m.envelopeMessageId())).build();
    IncomingMessage first = signed(KEYS, "r-1", "acct-1", NOW.minus(Duration.ofMinutes(59)), "{}");
    assertThat(handler.handle(first)).isEqualTo(Outcome.PROCESSED);
    assertThat(handler.handle(signed(KEYS, "r-2", "acct-2", NOW.minus(Duration.ofHours(2)), "{}")))
        .isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(parked(ds, "replay", "r-2")).isEqualTo("REPLAYED created at 2026-12-01T10:00:00Z (converge-created-at '"
        + NOW.minus(Duration.ofHours(2)).toEpochMilli() + "'), PT2H before it arrived, over the replay window of PT1H");
    assertThat(handler.handle(signed(KEYS, "r-3", "acct-3", NOW.plus(Duration.ofMinutes(3)), "{}")))
        .isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(parked(ds, "replay", "r-3")).endsWith("PT3M in the future, over the clock-skew tolerance of PT2M");

    IdempotentHandler later = IdempotentHandler.builder().group("replay").dataSource(ds).requireSignature(KEYS)
        .replayWindow(Duration.ofHours(1), Duration.ofMinutes(2))
        .clock(Clock.fixed(NOW.plus(Duration.ofHours(3)), ZoneOffset.UTC))
        .handler((c, m) -> ran.add(m.envelopeMessageId())).build();
    assertThat(later.handle(first)).as("a replay the dedup table still knows").isEqualTo(Outcome.DUPLICATE);
    assertThat(count(ds, "SELECT count(*) FROM converge_dlq WHERE message_id = 'r-1'")).isZero();

    long r2 = count(ds, "SELECT id FROM converge_dlq WHERE message_id = 'r-2'");
    assertThat(ConsumerOps.of(ds).redrive(r2)).as("ops judged it genuine").isTrue();
    assertThat(later.releaseHeld(List.of(TOPIC))).isOne();
    assertThat(ran).containsExactly("r-1", "r-2");
    assertThat(count(ds, "SELECT count(*) FROM converge_consumer_attempt")).as("no attempt counted").isZero();

    assertThatThrownBy(() -> IdempotentHandler.builder().group("g").dataSource(ds).handler((c, m) -> {
    })
        .replayWindow(Duration.ofSeconds(5), Duration.ZERO).build())
        .hasMessage("consumer.replayWindow.maxAge must be between 1 min and 365 days, but was PT5S");
  }
}
