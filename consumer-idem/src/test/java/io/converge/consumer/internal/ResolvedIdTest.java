package io.converge.consumer.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageIdResolver;
import io.converge.consumer.MissingMessageIdException;
import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import org.junit.jupiter.api.Test;

class ResolvedIdTest {

  private static String resolve(String id) {
    return ResolvedId.of(MessageIdResolver.envelope(),
        IncomingMessage.builder().topic("t").header(Envelope.MESSAGE_ID, id).build());
  }

  @Test
  void acceptsOneToTwoHundredPrintableAsciiCharactersWithoutSpaces() {
    String uuid = MessageIds.shared().next();
    assertThat(resolve(uuid)).isEqualTo(uuid);
    assertThat(resolve("!")).isEqualTo("!");
    assertThat(resolve("~".repeat(200))).hasSize(200);
    assertThat(resolve("order-42:payment/7")).isEqualTo("order-42:payment/7");
  }

  @Test
  void refusesLongIdsSpacesControlAndNonAsciiCharactersWithATypedError() {
    for (String bad : new String[]{"a".repeat(201), "a b", "a\tb", "a\u007fb", "caf\u00e9", "id\uD83D\uDE00"}) {
      assertThatThrownBy(() -> resolve(bad)).as(bad).isInstanceOf(MissingMessageIdException.class)
          .hasMessageContaining("printable ASCII");
    }
    assertThat(ResolvedId.usable("")).isFalse();
  }
}
