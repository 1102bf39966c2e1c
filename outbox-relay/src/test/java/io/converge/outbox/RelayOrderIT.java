package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.RelayFixture.CountingSink;
import io.converge.core.Envelope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Three relays drain one outbox while four producers write it: every key's messages reach one queue in
 * the order they were committed, no message is published twice, and every relay did part of the work.
 * Without the key-head claim (any unpublished row claimable with SKIP LOCKED), two relays publish rows
 * of one key concurrently and the order check fails.
 */
@ExtendWith({RocketMQExtension.class, RelayBed.Extension.class})
class RelayOrderIT {

  private static final int KEYS = 24;
  private static final int PER_KEY = 40;

  @Test
  void threeRelaysKeepPerKeyOrderWithoutDuplicates(RelayBed bed) throws Exception {
    List<CountingSink> sinks = new ArrayList<>();
    List<OutboxRelay> relays = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        CountingSink sink = new CountingSink(bed.sink().build());
        sinks.add(sink);
        OutboxRelay relay = bed.relay(sink).name("order-" + i).batchSize(8).build();
        relays.add(relay);
        relay.start();
      }
      Map<String, List<String>> committed = RelayFixture.writeConcurrently(4, KEYS, PER_KEY,
          (key, n) -> bed.publish(key));
      List<String> all = committed.values().stream().flatMap(List::stream).toList();
      assertThat(all).hasSize(KEYS * PER_KEY);
      bed.deliveries.awaitAll(all, Duration.ofSeconds(120));
      bed.deliveries.awaitQuiet(Duration.ofMillis(500));

      List<MessageExt> raw = bed.deliveries.raw();
      assertThat(raw).as("no row published twice in normal operation").hasSize(all.size());
      Map<String, List<MessageExt>> byKey = raw.stream()
          .collect(
              Collectors.groupingBy(m -> m.getUserProperty(Envelope.KEY), LinkedHashMap::new, Collectors.toList()));
      for (Map.Entry<String, List<String>> e : committed.entrySet()) {
        List<MessageExt> got = byKey.get(e.getKey());
        Set<Integer> queues = got.stream().map(MessageExt::getQueueId).collect(Collectors.toSet());
        assertThat(queues).as("key %s on one queue", e.getKey()).hasSize(1);
        List<String> brokerOrder = got.stream().sorted(Comparator.comparingLong(MessageExt::getQueueOffset))
            .map(m -> m.getUserProperty(Envelope.MESSAGE_ID)).toList();
        assertThat(brokerOrder).as("order of key %s", e.getKey()).containsExactlyElementsOf(e.getValue());
      }
      for (CountingSink s : sinks) {
        assertThat(s.calls.get()).as("every relay took part").isPositive();
      }
      assertThat(bed.count("published_at IS NULL")).isZero();
    } finally {
      relays.forEach(OutboxRelay::close);
    }
  }
}
