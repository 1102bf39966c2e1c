package io.converge.producer.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.Envelope;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The message key selects the queue: every message of one key lands in one queue, in the order its
 * units of work committed, so a consumer that reads a queue in order sees one key's messages in order.
 * Without the key selector the half messages are spread round-robin over the topic's queues and this
 * test fails.
 */
@ExtendWith(RocketMQExtension.class)
class RocketMQKeyOrderIT {

  private static final int PER_KEY = 12;
  private static DataSource db;

  @BeforeAll
  static void schema() throws Exception {
    db = ConvergePostgres.shared().newSchema("rmqorder");
    Migrations.apply(db, "producer");
  }

  @Test
  void oneKeyStaysInOneQueueInCommitOrder(EmbeddedRocketMQ mq) {
    String topic = RocketMQExtension.uniqueTopic("order");
    mq.createTopic(topic);
    List<String> keys = List.of("customer-1", "customer-2", "customer-3");
    Map<String, List<String>> published = new LinkedHashMap<>();
    try (RecordingConsumer consumer = RecordingConsumer.start(mq, topic);
        TxnProducer p = TxnProducer.builder().group(RocketMQExtension.uniqueTopic("g")).dataSource(db)
            .backend(RocketMQBackend.nameServer(mq.nameServerAddress())).topics(topic).build()) {
      // interleaved keys, one unit of work each, committed one after the other
      for (int i = 0; i < PER_KEY; i++) {
        for (String key : keys) {
          String payload = key + "#" + i;
          String id = p.inTransaction(tx -> tx.publish(
              OutgoingMessage.builder(topic).key(key).payload(payload.getBytes(UTF_8)).build()));
          published.computeIfAbsent(key, k -> new ArrayList<>()).add(id);
        }
      }
      // at least once: wait until every id was seen, duplicates allowed
      Set<String> all = published.values().stream().flatMap(List::stream).collect(Collectors.toSet());
      consumer.await(m -> all.contains(m.getUserProperty(Envelope.MESSAGE_ID)), all.size(), Duration.ofSeconds(60));
      await().atMost(Duration.ofSeconds(60)).until(() -> receivedIds(consumer).containsAll(all));
      assertThat(receivedIds(consumer)).as("every committed message delivered").containsAll(all);

      for (String key : keys) {
        List<MessageExt> ofKey = consumer.received(m -> key.equals(m.getUserProperty(Envelope.KEY)));
        Set<Integer> queues = ofKey.stream().map(MessageExt::getQueueId).collect(Collectors.toSet());
        assertThat(queues).as("queues of key %s", key).hasSize(1);
        assertThat(ofKey).allSatisfy(m -> assertThat(m.getKeys()).isEqualTo(key));
        // queue order (offsets) is commit order; a duplicate repeats an id later, never earlier
        List<String> inQueueOrder = ofKey.stream()
            .sorted(Comparator.comparingLong(MessageExt::getQueueOffset))
            .map(m -> m.getUserProperty(Envelope.MESSAGE_ID))
            .collect(Collectors.toCollection(LinkedHashSet::new))
            .stream().toList();
        assertThat(inQueueOrder).as("order of key %s", key).containsExactlyElementsOf(published.get(key));
      }
    }
  }

  private static Set<String> receivedIds(RecordingConsumer consumer) {
    return consumer.received().stream().map(m -> m.getUserProperty(Envelope.MESSAGE_ID)).collect(Collectors.toSet());
  }

}
