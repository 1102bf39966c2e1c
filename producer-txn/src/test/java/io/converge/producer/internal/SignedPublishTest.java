package io.converge.producer.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.core.Envelope;
import io.converge.core.InvalidMessageException;
import io.converge.core.InvalidSignatureException;
import io.converge.core.MessageSignature;
import io.converge.core.SigningKeys;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.internal.RecordingUnits.Recording;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code TxnProducerBuilder.sign}: every message a unit publishes reaches the backend signed, so that the envelope
 * any backend stamps ({@link OutgoingMessage#envelope}) carries a {@link Envelope#SIGNATURE} that verifies; without
 * the option nothing is signed. The schema header of {@code OutgoingMessage.Builder.schema} is validated and signed.
 */
class SignedPublishTest {

  private static final SigningKeys KEYS = SigningKeys.of("k1",
      Map.of("k1", "0123456789abcdef0123456789abcdef".getBytes(UTF_8)));
  private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-01T00:00:00Z"), ZoneOffset.UTC);

  private static UnitContext unit(SigningKeys keys, Recording backend) {
    return unit(keys, backend, io.converge.core.tracing.Tracing.none());
  }

  private static UnitContext unit(SigningKeys keys, Recording backend, io.converge.core.tracing.Tracing tracing) {
    return RecordingUnits.unit(RecordingUnits.settings(CLOCK, tracing, keys, 1024, 1024 * 1024, 1000), backend);
  }

  @Test
  void theSigningOptionSignsEveryMessageOverTheEnvelopeTheBackendStamps() {
    Recording backend = new Recording();
    UnitContext unit = unit(KEYS, backend);
    unit.publish(OutgoingMessage.builder("order-created").key("order-42").schema("order-created", 2, 1)
        .payload("{}".getBytes(UTF_8)).build());
    Map<String, String> sent = backend.published.get(0).envelope("orders", CLOCK.millis());
    assertThat(sent).containsEntry(Envelope.SCHEMA, "order-created/2.1").containsKey(Envelope.SIGNATURE);
    assertThat(sent.get(Envelope.SIGNATURE)).matches("v1:k1:[0-9a-f]{64}");
    MessageSignature.verify(KEYS, "order-created", sent, "{}".getBytes(UTF_8));
    sent.put(Envelope.SCHEMA, "order-created/3.0");
    assertThatThrownBy(() -> MessageSignature.verify(KEYS, "order-created", sent, "{}".getBytes(UTF_8)))
        .isInstanceOf(InvalidSignatureException.class).hasMessageStartingWith("MAC mismatch");

    assertThatThrownBy(() -> unit.publish(OutgoingMessage.builder("order-created").build()))
        .as("a signed message needs a body").isInstanceOf(InvalidMessageException.class)
        .hasMessageContaining("message.payload must not be empty on a signed message");
    assertThat(backend.published).hasSize(1);

    Recording plain = new Recording();
    unit(null, plain).publish(OutgoingMessage.builder("order-created").payload("{}".getBytes(UTF_8)).build());
    assertThat(plain.published.get(0).envelope("orders", 1L)).doesNotContainKeys(Envelope.SIGNATURE,
        Envelope.SCHEMA);
  }

  /**
   * With a tracer that records, the publish adds the trace context to the message: the schema and the signature
   * are kept, and the signature covers what is sent (a copy of the message that dropped them sent neither).
   */
  @Test
  void aTracedPublishKeepsTheSchemaAndTheSignature() {
    io.opentelemetry.sdk.OpenTelemetrySdk sdk = io.opentelemetry.sdk.OpenTelemetrySdk.builder()
        .setTracerProvider(io.opentelemetry.sdk.trace.SdkTracerProvider.builder().build()).build();
    Recording backend = new Recording();
    unit(KEYS, backend, io.converge.core.tracing.OpenTelemetryTracing.of(sdk)).publish(
        OutgoingMessage.builder("order-created").key("order-42").schema("order-created", 2, 1)
            .payload("{}".getBytes(UTF_8)).build());
    Map<String, String> sent = backend.published.get(0).envelope("orders", CLOCK.millis());
    assertThat(sent).containsKey(Envelope.TRACEPARENT).containsEntry(Envelope.SCHEMA, "order-created/2.1")
        .containsKey(Envelope.SIGNATURE);
    MessageSignature.verify(KEYS, "order-created", sent, "{}".getBytes(UTF_8));
    sdk.close();
  }

  @Test
  void aSchemaIsValidatedAndTheReservedHeadersAreRefused() {
    assertThatThrownBy(() -> OutgoingMessage.builder("t").schema("order created", 1, 0).build())
        .isInstanceOf(InvalidMessageException.class).hasMessageContaining("but was 'order created'");
    assertThatThrownBy(() -> OutgoingMessage.builder("t").schema("order-created", 1, -2).build())
        .isInstanceOf(InvalidMessageException.class).hasMessageContaining("but was 1.-2");
    assertThatThrownBy(() -> OutgoingMessage.builder("t").header(Envelope.SCHEMA, "x/1.0").build())
        .isInstanceOf(InvalidMessageException.class).hasMessageContaining("schema(type, major, minor)");
    assertThatThrownBy(() -> OutgoingMessage.builder("t").header(Envelope.SIGNATURE, "v1:k1:00").build())
        .isInstanceOf(InvalidMessageException.class).hasMessageContaining("'v1:k1:00'");
    assertThat(OutgoingMessage.builder("t").schema("order-created", 2, 0).build().schema())
        .hasToString("order-created/2.0");
  }
}
