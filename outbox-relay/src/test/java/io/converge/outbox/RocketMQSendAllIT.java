package io.converge.outbox;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.SendAllResult;
import io.converge.producer.Envelope;
import io.converge.producer.InvalidMessageException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The RocketMQ sink's pipelined batch: many keys in flight at once, each key's records stored in seq
 * order on one queue, and after a record of a key is refused (a body over the client's limit: a real
 * refusal) none of that key's later records is sent while every other key is. Sending the batch as
 * independent async sends (no chain per key) sends the poison key's later records and fails this test.
 */
@ExtendWith(RocketMQExtension.class)
class RocketMQSendAllIT {

  @Test
  void keepsPerKeyOrderAndStopsAKeyAfterItsFailure(EmbeddedRocketMQ mq) throws Exception {
    String topic = RocketMQExtension.uniqueTopic("sendall");
    mq.createTopic(topic);
    List<OutboxRecord> batch = new ArrayList<>();
    long seq = 0;
    for (int n = 0; n < 20; n++) {
      for (int k = 0; k < 30; k++) {
        String key = "key-" + k;
        byte[] payload = key.equals("key-7") && n == 5 ? new byte[100 * 1024] : (key + "/" + n).getBytes(UTF_8);
        batch.add(record(++seq, topic, key, payload));
      }
    }
    List<String> poisonAndAfter = batch.stream().filter(r -> r.key().equals("key-7")).skip(5)
        .map(OutboxRecord::messageId).toList();

    try (Deliveries deliveries = new Deliveries(mq, topic);
        RocketMQSink sink = RelayFixture.sink(mq).maxMessageBytes(64 * 1024).build()) {
      SendAllResult result = sink.sendAll(batch);

      assertThat(result.failed()).singleElement().satisfies(f -> {
        assertThat(f.record().messageId()).isEqualTo(poisonAndAfter.get(0));
        assertThat(f.error()).isInstanceOf(InvalidMessageException.class);
      });
      assertThat(result.sent()).hasSize(batch.size() - poisonAndAfter.size());
      assertThat(result.sent()).extracting(OutboxRecord::messageId).doesNotContainAnyElementsOf(poisonAndAfter);

      List<String> expected = result.sent().stream().map(OutboxRecord::messageId).toList();
      deliveries.awaitAll(expected, Duration.ofSeconds(30));
      deliveries.awaitQuiet(Duration.ofMillis(500));
      List<MessageExt> raw = deliveries.raw();
      assertThat(raw).as("nothing of key-7 after its refused record, nothing twice").hasSize(expected.size());
      Map<String, List<MessageExt>> byKey = raw.stream()
          .collect(Collectors.groupingBy(m -> m.getUserProperty(Envelope.KEY)));
      for (int k = 0; k < 30; k++) {
        String key = "key-" + k;
        List<String> brokerOrder = byKey.get(key).stream().sorted(Comparator.comparingLong(MessageExt::getQueueOffset))
            .map(m -> m.getUserProperty(Envelope.MESSAGE_ID)).toList();
        List<String> sentOrder = result.sent().stream().filter(r -> r.key().equals(key))
            .map(OutboxRecord::messageId).toList();
        assertThat(byKey.get(key).stream().map(MessageExt::getQueueId).distinct()).as("%s on one queue", key)
            .hasSize(1);
        assertThat(brokerOrder).as("order of %s", key).containsExactlyElementsOf(sentOrder);
        assertThat(sentOrder).hasSize(key.equals("key-7") ? 5 : 20);
      }
    }
  }

  private static OutboxRecord record(long seq, String topic, String key, byte[] payload) {
    String id = UUID.randomUUID().toString();
    return new OutboxRecord(seq, id, topic, key, null, Map.of(Envelope.MESSAGE_ID, id, Envelope.KEY, key), payload, 0);
  }
}
