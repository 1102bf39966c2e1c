package io.converge.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.core.Envelope;
import org.junit.jupiter.api.Test;

class MessageIdResolverTest {

  private static IncomingMessage.Builder msg() {
    return IncomingMessage.builder().topic("t");
  }

  @Test
  void defaultReadsOnlyTheEnvelopeHeader() {
    MessageIdResolver r = MessageIdResolver.envelope();
    assertThat(r.resolve(msg().header(Envelope.MESSAGE_ID, "0190-abc").build())).contains("0190-abc");
    assertThat(r.resolve(msg().brokerKey("k1").brokerMessageId("AC11").payload("{\"eventId\":\"e1\"}").build()))
        .isEmpty();
    assertThat(r.resolve(msg().header(Envelope.MESSAGE_ID, "  ").build())).isEmpty();
  }

  @Test
  void fallsBackInOrderOnlyWhenConfigured() {
    MessageIdResolver r = MessageIdResolver.envelope().orElse(MessageIdResolver.payloadField("eventId"))
        .orElse(MessageIdResolver.brokerKey());
    assertThat(r.resolve(msg().header(Envelope.MESSAGE_ID, "m1").brokerKey("k").build())).contains("m1");
    assertThat(r.resolve(msg().payload("{\"a\":{\"eventId\":\"nested\"},\"eventId\":\"e7\"}").brokerKey("k").build()))
        .contains("e7");
    assertThat(r.resolve(msg().payload("not json").brokerKey("k9").build())).contains("k9");
    assertThat(r.resolve(msg().payload("{}").build())).isEmpty();
  }

  @Test
  void payloadFieldReadsStringsAndIntegersButNotObjectsOrBrokenJson() {
    MessageIdResolver r = MessageIdResolver.payloadField("id");
    assertThat(r.resolve(msg().payload("{ \"x\": [1,{\"id\":\"no\"}], \"id\" : 12345 }").build())).contains("12345");
    assertThat(r.resolve(msg().payload("{\"id\":\"a\\\"b\"}").build())).contains("a\"b");
    assertThat(r.resolve(msg().payload("{\"id\":{\"v\":1}}").build())).isEmpty();
    assertThat(r.resolve(msg().payload("{\"id\":12.5}").build())).isEmpty();
    assertThat(r.resolve(msg().payload("{\"id\":\"unterminated").build())).isEmpty();
  }

  @Test
  void incomingMessageDefaultsTenantAndCopiesPayload() {
    byte[] body = {1, 2};
    IncomingMessage m = msg().payload(body).build();
    body[0] = 9;
    assertThat(m.payload()).containsExactly(1, 2);
    assertThat(m.tenant()).isEqualTo(Envelope.DEFAULT_TENANT);
    assertThat(msg().header(Envelope.TENANT, "acme").build().tenant()).isEqualTo("acme");
    assertThatThrownBy(() -> IncomingMessage.builder().build()).hasMessageContaining("topic must not be blank");
  }
}
