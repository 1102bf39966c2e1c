package io.converge.outbox;

import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RecordingConsumer;
import io.converge.core.Envelope;
import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.rocketmq.common.message.MessageExt;

/** Test support: records what consumers receive on one RocketMQ topic, counted by message id. */
public final class Deliveries implements AutoCloseable {

  private static final Duration POLL = Duration.ofMillis(50);

  private final RecordingConsumer consumer;

  public Deliveries(EmbeddedRocketMQ mq, String topic) {
    this.consumer = RecordingConsumer.start(mq, topic);
  }

  public List<MessageExt> raw() {
    return consumer.received();
  }

  /** The message ids received so far ({@code converge-message-id}). */
  public Set<String> ids() {
    return consumer.received().stream().map(m -> m.getUserProperty(Envelope.MESSAGE_ID)).collect(Collectors.toSet());
  }

  /** Waits until every id of {@code ids} was received at least once. */
  public void awaitAll(Collection<String> ids, Duration timeout) {
    await().atMost(timeout).pollInterval(POLL).untilAsserted(() -> {
      Set<String> seen = ids();
      List<String> missing = ids.stream().filter(i -> !seen.contains(i)).toList();
      if (!missing.isEmpty()) {
        throw new AssertionError(missing.size() + " of " + ids.size() + " not delivered within " + timeout
            + ", e.g. " + missing.subList(0, Math.min(5, missing.size())));
      }
    });
  }

  /**
   * Waits until nothing more arrives: no message for {@code quiet} (within a minute), so that a count
   * taken next includes any late duplicate.
   */
  public void awaitQuiet(Duration quiet) {
    AtomicInteger last = new AtomicInteger(-1);
    await().atMost(Duration.ofMinutes(1)).pollDelay(Duration.ZERO).pollInterval(quiet)
        .until(() -> {
          int n = consumer.received().size();
          return last.getAndSet(n) == n;
        });
  }

  /** Watches for {@code window}: fails as soon as one of {@code ids} is received. */
  public void awaitNoneFor(Duration window, Collection<String> ids) {
    await().during(window).atMost(window.plusSeconds(10)).pollInterval(POLL)
        .failFast("one of " + ids.size() + " ids that must wait was received", () -> !Collections.disjoint(ids(), ids))
        .until(() -> true);
  }

  @Override
  public void close() {
    consumer.close();
  }
}
