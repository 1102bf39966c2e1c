package io.converge.outbox;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.producer.Envelope;
import io.converge.producer.testing.Delivered;
import io.converge.producer.testing.MessageSink;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.rocketmq.common.message.MessageExt;

/** Test support: records what consumers receive on one RocketMQ topic, counted by message id. */
public final class Deliveries implements MessageSink {

  private final RecordingConsumer consumer;

  public Deliveries(EmbeddedRocketMQ mq, String topic) {
    this.consumer = RecordingConsumer.start(mq, topic);
  }

  public List<MessageExt> raw() {
    return consumer.received();
  }

  @Override
  public List<Delivered> received() {
    return consumer.received().stream()
        .map(m -> new Delivered(m.getUserProperty(Envelope.MESSAGE_ID), m.getUserProperty(Envelope.KEY),
            Map.copyOf(m.getProperties()), m.getBody()))
        .toList();
  }

  public Set<String> ids() {
    return received().stream().map(Delivered::id).collect(Collectors.toSet());
  }

  /** Waits until every id of {@code ids} was received at least once. */
  public void awaitAll(Collection<String> ids, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Set<String> seen = ids();
      if (seen.containsAll(ids)) {
        return;
      }
      if (System.nanoTime() > deadline) {
        List<String> missing = ids.stream().filter(i -> !seen.contains(i)).toList();
        throw new AssertionError(missing.size() + " of " + ids.size() + " not delivered within " + timeout
            + ", e.g. " + missing.subList(0, Math.min(5, missing.size())));
      }
      Thread.sleep(50);
    }
  }

  @Override
  public void close() {
    consumer.close();
  }
}
