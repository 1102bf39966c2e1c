package io.converge.outbox.rocketmq;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.producer.rocketmq.KeyQueueSelector;
import io.converge.producer.rocketmq.RocketMQClients;
import io.converge.producer.rocketmq.RocketMQErrors;
import io.converge.producer.rocketmq.RocketMQMessages;
import java.time.Duration;
import java.util.function.Consumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
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
    stored(r, result);
  }

  /**
   * Sends {@code r} without waiting: {@code done} receives null once the broker stored it, or the
   * classified failure. Called back on a client thread.
   */
  void sendAsync(OutboxRecord r, Consumer<RuntimeException> done) {
    SendCallback callback = new SendCallback() {

      @Override
      public void onSuccess(SendResult result) {
        stored(r, result);
        done.accept(null);
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

  private static void stored(OutboxRecord r, SendResult result) {
    if (result.getSendStatus() != SendStatus.SEND_OK) {
      // stored on the master; a flush or slave sync lagged
      LOG.debug("Message {} stored with status {}", r.messageId(), result.getSendStatus());
    }
  }

  /**
   * Classified by {@link RocketMQErrors}: refusals of the record itself are {@link
   * io.converge.producer.InvalidMessageException}s (they count as attempts and park the key after the
   * relay's limit), anything else, including "No route info" while no broker is registered, is a {@link
   * io.converge.producer.BrokerUnavailableException}: an outage, retried with backoff, never counted.
   */
  private RuntimeException classify(OutboxRecord r, Throwable e) {
    return RocketMQErrors.classify(e, "message", r.messageId(), r.topic(), RocketMQErrors.brokersRegistered(producer));
  }

  void close() {
    producer.shutdown();
  }
}
