package io.converge.consumer.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.consumer.IncomingMessage;
import io.converge.core.Envelope;
import org.junit.jupiter.api.Test;

/** The limits of {@link EnvelopeCheck}: what PostgreSQL refuses, counted as PostgreSQL counts it. */
class EnvelopeCheckTest {

  private static IncomingMessage.Builder message(String tenant, String key) {
    return IncomingMessage.builder().topic("payments").header(Envelope.TENANT, tenant).brokerKey(key)
        .brokerMessageId("7F0000011F9A18B4AAC2");
  }

  @Test
  void aValidEnvelopePasses() {
    assertThat(EnvelopeCheck.check(message("t".repeat(64), "k".repeat(1024)).build())).isNull();
    // 64 characters of PostgreSQL: a character outside the BMP is two chars in Java, one in the column
    assertThat(EnvelopeCheck.check(message("\uD83D\uDCB3".repeat(64), "order-1").build())).isNull();
    assertThat(EnvelopeCheck.check(message(null, null).build())).isNull();
  }

  @Test
  void eachFieldTheTablesStoreIsChecked() {
    assertThat(EnvelopeCheck.check(message("\uD83D\uDCB3".repeat(65), "k").build()).reason())
        .isEqualTo("converge-tenant: 65 characters, at most 64: '" + "\uD83D\uDCB3".repeat(65) + "'");
    assertThat(EnvelopeCheck.check(message("acme\uD800x", "k").build()).reason())
        .isEqualTo("converge-tenant: contains an unpaired surrogate at index 4, which UTF-8 cannot encode: "
            + "'acme\\ud800x'");
    assertThat(EnvelopeCheck.check(message("acme", "k\\\u0000").build()).reason())
        .isEqualTo("message key: contains NUL, which PostgreSQL text cannot hold: 'k\\\\\\u0000'");
    assertThat(EnvelopeCheck.check(message("acme", "é".repeat(513)).build()).reason())
        .startsWith("message key: 1026 bytes in UTF-8, at most 1024: 'éé");
    assertThat(EnvelopeCheck.check(message("acme", "k").topic("t".repeat(256)).build()).field()).isEqualTo("topic");
    assertThat(EnvelopeCheck.check(message("acme", "k").brokerMessageId("b\u0000").build()).field())
        .isEqualTo("broker id");
  }

  @Test
  void theStoredValuesFitTheirColumnsAndAnInvalidLineHoldsNoKey() {
    IncomingMessage longTenant = message("t".repeat(100), "order-1").build();
    EnvelopeCheck.Stored stored = EnvelopeCheck.Stored.of(longTenant);
    assertThat(stored.tenant()).hasSize(64).endsWith("…");
    assertThat(stored.key()).as("the tenant's line is invalid as a whole").isNull();
    EnvelopeCheck.Stored badBrokerId = EnvelopeCheck.Stored.of(
        message("acme", "order-1").brokerMessageId("\u0000".repeat(200)).build());
    assertThat(badBrokerId.brokerMessageId()).hasSize(127).startsWith("\\u0000\\u0000").endsWith("…");
    assertThat(badBrokerId.key()).as("the rest of the key's line waits behind it").isEqualTo("order-1");
    assertThat(badBrokerId.tenant()).isEqualTo("acme");
  }
}
