package io.converge.outbox.rocketmq;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.core.rocketmq.KeyQueueSelector;
import io.converge.core.rocketmq.RocketMQClients;
import io.converge.core.rocketmq.RocketMQErrors;
import io.converge.core.rocketmq.RocketMQMessages;
import java.time.Duration;
import java.util.function.Consumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The RocketMQ client of a {@link RocketMQSink}; loaded only when rocketmq-client is present. */
final class RocketMQClient {

  private static final Logger LOG = LoggerFactory.getLogger(RocketMQClient.class);

  private final DefaultMQProducer producer;

  RocketMQClient(String nameServer, String group, Duration sendTimeout, int maxMessageBytes) {
    // the relay retries with backoff itself; a client retry to another queue would break the key's order
    producer = RocketMQClients.startProducer(nameServer, group, sendTimeout, 0, maxMessageBytes);
  }

  void send(OutboxRecord r) throws InterruptedException {
    SendResult result;
    try {
      result = producer.send(message(r), KeyQueueSelector.BY_KEY, r.orderKey());
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      throw classify(r, e);
    }
    if (!RocketMQErrors.acknowledged(result.getSendStatus())) {
      throw notAcknowledged(r, result);
    }
  }

  /**
   * Sends {@code r} without waiting: {@code done} receives null once the broker stored it, or the
   * classified failure. Called back on a client thread.
   */
  void sendAsync(OutboxRecord r, Consumer<RuntimeException> done) {
    SendCallback callback = new SendCallback() {

      @Override
      public void onSuccess(SendResult result) {
        done.accept(RocketMQErrors.acknowledged(result.getSendStatus()) ? null : notAcknowledged(r, result));
      }

      @Override
      public void onException(Throwable e) {
        done.accept(classify(r, e));
      }
    };
    try {
      producer.send(message(r), KeyQueueSelector.BY_KEY, r.orderKey(), callback);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      done.accept(classify(r, e));
    } catch (Exception e) {
      done.accept(classify(r, e));
    }
  }

  private static Message message(OutboxRecord r) {
    return RocketMQMessages.toMessage(r.topic(), r.tag(), r.orderKey(), r.payload(), r.headers());
  }

  /**
   * A send the broker stored without acknowledging it (a flush or the synchronous slave lagged or missing):
   * an outage, so the relay sends the record again after its backoff. The master may then hold it twice, the
   * consumers absorb that; counting it as delivered could lose it with the master's machine.
   */
  private static RuntimeException notAcknowledged(OutboxRecord r, SendResult result) {
    LOG.debug("Message {} stored with status {}: sent again", r.messageId(), result.getSendStatus());
    return RocketMQErrors.notAcknowledged(result, "message", r.messageId(), r.topic());
  }

  /**
   * Classified by {@link RocketMQErrors}: refusals of the record itself are {@link
   * io.converge.core.InvalidMessageException}s (they count as attempts and park the key after the
   * relay's limit), anything else, including "No route info" while no broker is registered, is a {@link
   * io.converge.core.BrokerUnavailableException}: an outage, retried with backoff, never counted.
   */
  private RuntimeException classify(OutboxRecord r, Throwable e) {
    return RocketMQErrors.classify(e, "message", r.messageId(), r.topic(), RocketMQErrors.brokersRegistered(producer));
  }

  void close() {
    producer.shutdown();
  }
}
