package io.converge.outbox.rocketmq;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.SendAllResult;
import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.ConvergeException;
import io.converge.producer.Envelope;
import io.converge.producer.InvalidMessageException;
import io.converge.producer.testing.StoppedRocketMQ;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The sink recognises "no route" by the same rule as the half-message backend ({@code
 * RocketMQNoRouteIT} in producer-txn), in its synchronous and its pipelined sends alike: with brokers
 * registered the topic does not exist (a refusal of the record, with the same text as the backend's);
 * with no broker registered RocketMQ is down (an outage).
 */
@ExtendWith(RocketMQExtension.class)
class RocketMQSinkNoRouteIT {

  @Test
  void aTopicThatDoesNotExistWhileBrokersAreUpIsAnInvalidMessage(EmbeddedRocketMQ mq) throws Exception {
    assertThat(mq.settings().autoCreateTopics()).as("the embedded broker must not create topics").isFalse();
    String missing = RocketMQExtension.uniqueTopic("missing");
    try (RocketMQSink sink = sink(mq)) {
      OutboxRecord one = record(1, missing);
      assertThatThrownBy(() -> sink.send(one)).isInstanceOf(InvalidMessageException.class)
          .hasMessageContaining("Topic " + missing + " is unknown to the RocketMQ name server")
          .satisfies(e -> assertThat(((ConvergeException) e).messageId()).isEqualTo(one.messageId()));
      OutboxRecord two = record(2, missing);
      SendAllResult result = sink.sendAll(List.of(two));
      assertThat(result.sent()).isEmpty();
      assertThat(result.failed()).singleElement().satisfies(f -> assertThat(f.error())
          .isInstanceOf(InvalidMessageException.class)
          .hasMessageContaining("Topic " + missing + " is unknown to the RocketMQ name server"));
    }
  }

  @Test
  void aTopicWithoutRouteDuringAnOutageIsBrokerUnavailable() throws Exception {
    try (StoppedRocketMQ down = StoppedRocketMQ.withTopic("outage"); RocketMQSink sink = sink(down.mq())) {
      OutboxRecord one = record(1, down.topic());
      Throwable thrown = catchThrowable(() -> sink.send(one));
      assertThat(thrown).isInstanceOf(BrokerUnavailableException.class).hasMessageContaining(down.topic());
      assertThat(((ConvergeException) thrown).messageId()).isEqualTo(one.messageId());
      SendAllResult result = sink.sendAll(List.of(record(2, down.topic())));
      assertThat(result.sent()).isEmpty();
      assertThat(result.failed()).singleElement()
          .satisfies(f -> assertThat(f.error()).isInstanceOf(BrokerUnavailableException.class));
    }
  }

  private static RocketMQSink sink(EmbeddedRocketMQ mq) {
    return RocketMQSink.nameServer(mq.nameServerAddress()).group(RocketMQExtension.uniqueTopic("g"))
        .sendTimeout(Duration.ofSeconds(2)).build();
  }

  private static OutboxRecord record(long seq, String topic) {
    String id = UUID.randomUUID().toString();
    return new OutboxRecord(seq, id, topic, "k", null, Map.of(Envelope.MESSAGE_ID, id, Envelope.KEY, "k"),
        ("no-route-" + seq).getBytes(UTF_8), 0);
  }
}
