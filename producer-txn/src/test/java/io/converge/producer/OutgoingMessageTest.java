package io.converge.producer;

import io.converge.core.Envelope;
import io.converge.core.InvalidMessageException;
import io.converge.core.MessageIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class OutgoingMessageTest {

  @Test
  void generatesAValidTimeOrderedIdWhenNoneIsGiven() {
    OutgoingMessage a = OutgoingMessage.builder("orders").build();
    OutgoingMessage b = OutgoingMessage.builder("orders").build();
    assertThat(MessageIds.isValid(a.id())).isTrue();
    assertThat(a.id()).isNotEqualTo(b.id());
    assertThat(a.id().charAt(14)).as("UUID version 7").isEqualTo('7');
    assertThat(a.id().compareTo(b.id())).isNegative();
  }

  @Test
  void envelopeCarriesIdKeyTenantSourceAndTimeOverApplicationHeaders() {
    OutgoingMessage m = OutgoingMessage.builder("orders").key("o-1").tenant("acme")
        .header("note", "x").header(Envelope.MESSAGE_ID, "spoofed").build();
    Map<String, String> env = m.envelope("order-service", 42L);
    assertThat(env).containsEntry(Envelope.MESSAGE_ID, m.id()).containsEntry(Envelope.KEY, "o-1")
        .containsEntry(Envelope.TENANT, "acme").containsEntry(Envelope.SOURCE, "order-service")
        .containsEntry(Envelope.CREATED_AT, "42").containsEntry("note", "x");
    assertThat(OutgoingMessage.builder("orders").build().tenant()).isEqualTo(Envelope.DEFAULT_TENANT);
  }

  @Test
  void malformedFieldsAreRefusedQuotingTheValue() {
    assertThatThrownBy(() -> OutgoingMessage.builder("a b").build())
        .isInstanceOf(InvalidMessageException.class).hasMessageContaining("but was 'a b'");
    assertThatThrownBy(() -> OutgoingMessage.builder("t").id("not-a-uuid").build())
        .isInstanceOf(InvalidMessageException.class).hasMessageContaining("'not-a-uuid'");
    assertThatThrownBy(() -> OutgoingMessage.builder("t").key("x".repeat(129)).build())
        .isInstanceOf(InvalidMessageException.class).hasMessageContaining("message.key");
    assertThatThrownBy(() -> OutgoingMessage.builder("t").key("bad\nkey").build())
        .isInstanceOf(InvalidMessageException.class);
    assertThatThrownBy(() -> OutgoingMessage.builder("t").header("Bad Name", "v").build())
        .isInstanceOf(InvalidMessageException.class).hasMessageContaining("'Bad Name'");
  }
}
