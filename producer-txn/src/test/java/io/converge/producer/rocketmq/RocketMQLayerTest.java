package io.converge.producer.rocketmq;

import io.converge.core.rocketmq.KeyQueueSelector;
import io.converge.core.rocketmq.RocketMQMessages;
import io.converge.core.rocketmq.RocketMQSettings;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.core.Envelope;
import io.converge.producer.OutgoingMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Test;

/** The selector, the envelope mapping and the shared settings of the RocketMQ layer, without servers. */
class RocketMQLayerTest {

  @Test
  void oneKeyAlwaysSelectsOneQueueWhateverItsHash() {
    List<MessageQueue> queues = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      queues.add(new MessageQueue("t", "b", i));
    }
    for (String key : List.of("order-1", "order-2", "", "polygenelubricants")) { // the last hashes to MIN_VALUE
      MessageQueue q = KeyQueueSelector.BY_KEY.select(queues, null, key);
      assertThat(q.getQueueId()).isEqualTo(Math.floorMod(key.hashCode(), 8)).isBetween(0, 7);
      assertThat(KeyQueueSelector.BY_KEY.select(queues, null, key)).isSameAs(q);
    }
    assertThat("polygenelubricants".hashCode()).isEqualTo(Integer.MIN_VALUE);
  }

  @Test
  void theEnvelopeTravelsAsUserPropertiesAndTheKeyAsKeys() {
    OutgoingMessage m = OutgoingMessage.builder("orders").key("order-7").tenant("acme").tag("created")
        .payload("{}".getBytes(UTF_8)).build();
    Message msg = OutgoingMessages.toMessage(m, "svc", 1234L);
    assertThat(msg.getTopic()).isEqualTo("orders");
    assertThat(msg.getTags()).isEqualTo("created");
    assertThat(msg.getKeys()).isEqualTo("order-7");
    assertThat(msg.getBody()).isEqualTo("{}".getBytes(UTF_8));
    assertThat(RocketMQMessages.userProperties(msg)).isEqualTo(m.envelope("svc", 1234L))
        .containsEntry(Envelope.MESSAGE_ID, m.id()).doesNotContainKeys("KEYS", "TAGS");
  }

  @Test
  void aMessageWithoutKeyIsKeyedByItsId() {
    OutgoingMessage m = OutgoingMessage.builder("orders").payload(new byte[]{1}).build();
    assertThat(OutgoingMessages.keys(m)).isEqualTo(m.id());
    assertThat(OutgoingMessages.toMessage(m, "svc", 1L).getKeys()).isEqualTo(m.id());
  }

  @Test
  void aForeignMessageMapsToItsUserPropertiesAndAnEmptyBody() {
    Message msg = RocketMQMessages.toMessage("t", null, "k", null, Map.of("x-foreign", "1"));
    assertThat(RocketMQMessages.userProperties(msg)).containsExactly(Map.entry("x-foreign", "1"));
    assertThat(RocketMQMessages.body(msg)).isEmpty();
    assertThat(RocketMQMessages.userProperties(new Message())).isEmpty();
  }

  @Test
  void badSettingsNameThePropertyAndTheValue() {
    assertThat(RocketMQSettings.nameServer("a:1;b-2.example:9876")).isEqualTo("a:1;b-2.example:9876");
    assertThatThrownBy(() -> RocketMQSettings.nameServer("bad host"))
        .hasMessage("rocketmq.nameServer must be host:port[;host:port...], but was bad host");
    assertThatThrownBy(() -> RocketMQSettings.nameServer(null))
        .hasMessage("rocketmq.nameServer must be host:port[;host:port...], but was null");
    assertThatThrownBy(() -> RocketMQSettings.sendTimeout(Duration.ofMillis(99)))
        .hasMessage("rocketmq.sendTimeout must be at least 100 ms, but was PT0.099S");
    RocketMQSettings.requireClient("test"); // present on this class path: no error
  }
}
