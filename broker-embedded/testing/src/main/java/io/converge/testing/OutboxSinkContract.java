package io.converge.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.SendAllResult;
import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import io.converge.core.Envelope;
import io.converge.core.InvalidMessageException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The guarantees every {@link OutboxSink} gives the relay, proved against a real broker by one subclass
 * per sink (RocketMQ in converge-testing's own tests, Pulsar in pulsar-adapter):
 * <ul>
 *   <li>one {@link OutboxSink#sendAll} keeps per-key order: a key's records arrive on one
 *       queue/partition in the order given, with their envelope headers unchanged;</li>
 *   <li>a refused record (a body over the limit) is a typed refusal of that record only: no later
 *       record of its key is sent, every other key is;</li>
 *   <li>a topic the broker does not know (or refuses for good) is an {@link InvalidMessageException}
 *       quoting the topic, in {@code send} and {@code sendAll} alike, not an outage;</li>
 *   <li>a broker that is down is a {@link BrokerUnavailableException} (an outage, not a refusal), reported
 *       within {@link Outage#reportedWithin()}.</li>
 * </ul>
 * Sending the batch as independent async sends (no chain per key) sends the poison key's later records
 * and fails {@link #keepsPerKeyOrderAndStopsAKeyAfterItsFailure}.
 */
public abstract class OutboxSinkContract {

  /** A record as the broker stored it. */
  public record Arrived(String messageId, String key, int queue, long position, Map<String, String> headers) {
  }

  /** What arrives on one topic, read by a subscription from its beginning. */
  public interface Arrivals extends AutoCloseable {

    /** Waits until every id of {@code ids} arrived, failing after {@code timeout}. */
    void awaitAll(List<String> ids, Duration timeout);

    /** Waits until nothing new arrived for {@code quiet}. */
    void awaitQuiet(Duration quiet);

    /** Everything that arrived so far. */
    List<Arrived> arrived();
  }

  /** A broker that is down, a topic it knew and a sink pointed at it; closing brings the broker back. */
  public interface Outage extends AutoCloseable {

    String topic();

    OutboxSink sink();

    /**
     * How long the sink may take to report the outage to one call (its send timeout and some slack): the
     * relay's outage backoff counts on a send that fails in bounded time.
     */
    default Duration reportedWithin() {
      return Duration.ofSeconds(30);
    }
  }

  /** A fresh, unique topic name. */
  protected abstract String uniqueTopic(String prefix);

  /** Creates {@code topic} on the broker (with several queues/partitions where the broker has them). */
  protected abstract void createTopic(String topic) throws Exception;

  /** A new sink that refuses a body of {@link #oversizePayload()}. */
  protected abstract OutboxSink newSink();

  /** A payload the sink or its broker refuses as too large. */
  protected abstract byte[] oversizePayload();

  /** Starts reading what arrives on {@code topic}. */
  protected abstract Arrivals arrivals(String topic) throws Exception;

  /** A topic the broker refuses every write to: one it does not know, or one that stands in for it. */
  protected abstract String refusingTopic() throws Exception;

  /** The text the refusal of a record for {@link #refusingTopic()} contains. */
  protected abstract String refusingTopicReason(String topic);

  /** Takes a broker down (its data kept) with a topic it knew. */
  protected abstract Outage outage() throws Exception;

  @Test
  void keepsPerKeyOrderAndStopsAKeyAfterItsFailure() throws Exception {
    String topic = uniqueTopic("sendall");
    createTopic(topic);
    List<OutboxRecord> batch = new ArrayList<>();
    long seq = 0;
    for (int n = 0; n < 20; n++) {
      for (int k = 0; k < 30; k++) {
        String key = "key-" + k;
        byte[] payload = key.equals("key-7") && n == 5 ? oversizePayload() : (key + "/" + n).getBytes(UTF_8);
        batch.add(record(++seq, topic, key, payload));
      }
    }
    List<String> poisonAndAfter = batch.stream().filter(r -> r.key().equals("key-7")).skip(5)
        .map(OutboxRecord::messageId).toList();

    try (Arrivals arrivals = arrivals(topic); OutboxSink sink = newSink()) {
      SendAllResult result = sink.sendAll(batch);

      assertThat(result.failed()).singleElement().satisfies(f -> {
        assertThat(f.record().messageId()).isEqualTo(poisonAndAfter.get(0));
        assertThat(f.error()).isInstanceOf(InvalidMessageException.class);
      });
      assertThat(result.sent()).hasSize(batch.size() - poisonAndAfter.size());
      assertThat(result.sent()).extracting(OutboxRecord::messageId).doesNotContainAnyElementsOf(poisonAndAfter);

      List<String> expected = result.sent().stream().map(OutboxRecord::messageId).toList();
      arrivals.awaitAll(expected, Duration.ofSeconds(30));
      arrivals.awaitQuiet(Duration.ofMillis(500));
      List<Arrived> raw = arrivals.arrived();
      assertThat(raw).as("nothing of key-7 after its refused record, nothing twice").hasSize(expected.size());
      Map<String, OutboxRecord> byId = batch.stream()
          .collect(Collectors.toMap(OutboxRecord::messageId, r -> r));
      for (Arrived a : raw) {
        assertThat(a.headers()).as("envelope of %s", a.messageId())
            .containsAllEntriesOf(byId.get(a.messageId()).headers());
        assertThat(a.key()).isEqualTo(byId.get(a.messageId()).key());
      }
      Map<String, List<Arrived>> byKey = raw.stream().collect(Collectors.groupingBy(Arrived::key));
      for (int k = 0; k < 30; k++) {
        String key = "key-" + k;
        List<String> brokerOrder = byKey.get(key).stream().sorted(Comparator.comparingLong(Arrived::position))
            .map(Arrived::messageId).toList();
        List<String> sentOrder = result.sent().stream().filter(r -> r.key().equals(key))
            .map(OutboxRecord::messageId).toList();
        assertThat(byKey.get(key).stream().map(Arrived::queue).distinct()).as("%s on one queue", key).hasSize(1);
        assertThat(brokerOrder).as("order of %s", key).containsExactlyElementsOf(sentOrder);
        assertThat(sentOrder).hasSize(key.equals("key-7") ? 5 : 20);
      }
    }
  }

  @Test
  void aTopicTheBrokerRefusesIsAnInvalidMessage() throws Exception {
    String missing = refusingTopic();
    try (OutboxSink sink = newSink()) {
      OutboxRecord one = record(1, missing, "k", "no-route-1".getBytes(UTF_8));
      Throwable thrown = catchThrowable(() -> sink.send(one));
      assertThat(thrown).isInstanceOf(InvalidMessageException.class).hasMessageContaining(missing)
          .hasMessageContaining(refusingTopicReason(missing));
      assertThat(((ConvergeException) thrown).messageId()).isEqualTo(one.messageId());
      OutboxRecord two = record(2, missing, "k", "no-route-2".getBytes(UTF_8));
      SendAllResult result = sink.sendAll(List.of(two));
      assertThat(result.sent()).isEmpty();
      assertThat(result.failed()).singleElement().satisfies(f -> assertThat(f.error())
          .isInstanceOf(InvalidMessageException.class).hasMessageContaining(missing)
          .hasMessageContaining(refusingTopicReason(missing)));
    }
  }

  @Test
  void aBrokerThatIsDownIsBrokerUnavailable() throws Exception {
    try (Outage down = outage()) {
      OutboxSink sink = down.sink();
      OutboxRecord one = record(1, down.topic(), "k", "outage-1".getBytes(UTF_8));
      long start = System.nanoTime();
      Throwable thrown = catchThrowable(() -> sink.send(one));
      assertThat(Duration.ofNanos(System.nanoTime() - start)).as("send reports the outage in time")
          .isLessThanOrEqualTo(down.reportedWithin());
      assertThat(thrown).isInstanceOf(BrokerUnavailableException.class).hasMessageContaining(down.topic());
      assertThat(((ConvergeException) thrown).messageId()).isEqualTo(one.messageId());
      start = System.nanoTime();
      SendAllResult result = sink.sendAll(List.of(record(2, down.topic(), "k", "outage-2".getBytes(UTF_8))));
      assertThat(Duration.ofNanos(System.nanoTime() - start)).as("sendAll reports the outage in time")
          .isLessThanOrEqualTo(down.reportedWithin());
      assertThat(result.sent()).isEmpty();
      assertThat(result.failed()).singleElement()
          .satisfies(f -> assertThat(f.error()).isInstanceOf(BrokerUnavailableException.class));
    }
  }

  private static OutboxRecord record(long seq, String topic, String key, byte[] payload) {
    String id = UUID.randomUUID().toString();
    return new OutboxRecord(seq, id, topic, key, null,
        Map.of(Envelope.MESSAGE_ID, id, Envelope.KEY, key, Envelope.TENANT, "acme"), payload, 0);
  }
}
