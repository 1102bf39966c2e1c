package io.converge.outbox.rocketmq;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.InvalidMessageException;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.rocketmq.client.common.ClientErrorCode;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The RocketMQ client of a {@link RocketMQSink}; loaded only when rocketmq-client is present. */
final class RocketMQClient {

  private static final Logger LOG = LoggerFactory.getLogger(RocketMQClient.class);
  /** One key, one queue: its messages keep their order (same rule as the half-message backend). */
  private static final MessageQueueSelector BY_KEY =
      (queues, msg, key) -> queues.get(Math.floorMod(key.hashCode(), queues.size()));

  private final DefaultMQProducer producer;
  private final Duration sendTimeout;

  RocketMQClient(String nameServer, String group, String instance, Duration sendTimeout, int maxMessageBytes) {
    this.sendTimeout = sendTimeout;
    producer = new DefaultMQProducer(group);
    producer.setNamesrvAddr(nameServer);
    producer.setInstanceName(instance);
    producer.setSendMsgTimeout((int) sendTimeout.toMillis());
    producer.setMaxMessageSize(maxMessageBytes);
    // the relay retries with backoff itself; a client retry to another queue would break the key's order
    producer.setRetryTimesWhenSendFailed(0);
    try {
      producer.start();
    } catch (MQClientException e) {
      producer.shutdown();
      throw new BrokerUnavailableException("RocketMQ relay client " + instance + " cannot start against " + nameServer
          + ": " + e.getErrorMessage(), null, e);
    }
  }

  void send(OutboxRecord r) throws InterruptedException {
    SendResult result;
    try {
      result = producer.send(message(r), BY_KEY, r.orderKey());
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
      producer.send(message(r), BY_KEY, r.orderKey(), callback);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      done.accept(classify(r, e));
    } catch (Exception e) {
      done.accept(classify(r, e));
    }
  }

  private static Message message(OutboxRecord r) {
    Message msg = new Message(r.topic(), r.tag(), r.orderKey(), r.payload());
    for (Map.Entry<String, String> h : r.headers().entrySet()) {
      msg.putUserProperty(h.getKey(), h.getValue());
    }
    return msg;
  }

  private static void stored(OutboxRecord r, SendResult result) {
    if (result.getSendStatus() != SendStatus.SEND_OK) {
      // stored on the master; a flush or slave sync lagged
      LOG.debug("Message {} stored with status {}", r.messageId(), result.getSendStatus());
    }
  }

  /**
   * Refusals of the record itself are {@link InvalidMessageException}s (they count as attempts and park the
   * key after the relay's limit): a message the client or broker finds illegal (too large, bad properties),
   * no permission, and a topic that does not exist: "No route info" while the cluster's brokers are up, or
   * the broker's TOPIC_NOT_EXIST. Anything else (timeouts, connection errors, no route because no broker
   * is registered) is {@link BrokerUnavailableException}: an outage, retried with backoff, never counted.
   */
  private RuntimeException classify(OutboxRecord r, Throwable e) {
    if (e instanceof MQClientException ce && ce.getResponseCode() == ResponseCode.MESSAGE_ILLEGAL) {
      return new InvalidMessageException("RocketMQ refused message " + r.messageId() + " on " + r.topic() + ": "
          + ce.getErrorMessage(), r.messageId(), ce);
    }
    if (e instanceof MQBrokerException be && (be.getResponseCode() == ResponseCode.MESSAGE_ILLEGAL
        || be.getResponseCode() == ResponseCode.NO_PERMISSION || be.getResponseCode() == ResponseCode.TOPIC_NOT_EXIST)) {
      return new InvalidMessageException("RocketMQ broker refused message " + r.messageId() + " on " + r.topic()
          + ": " + be.getErrorMessage(), r.messageId(), be);
    }
    if (noRoute(e) && brokersRegistered()) {
      return new InvalidMessageException("RocketMQ has no route to topic " + r.topic() + " although brokers are up"
          + " (the topic does not exist); message " + r.messageId() + " refused: " + ((MQClientException) e).getErrorMessage(),
          r.messageId(), e);
    }
    return new BrokerUnavailableException("RocketMQ is unavailable for message " + r.messageId() + " on " + r.topic()
        + ": " + e, r.messageId(), e);
  }

  private static boolean noRoute(Throwable e) {
    return e instanceof MQClientException ce && (ce.getResponseCode() == ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION
        || (ce.getErrorMessage() != null && ce.getErrorMessage().contains("No route info")));
  }

  /**
   * Whether the name servers know at least one broker. "No route" to a topic then means the topic does not
   * exist; with no broker registered (all stopped or restarting) it means an outage. When the name servers
   * cannot be asked either, it is an outage.
   */
  private boolean brokersRegistered() {
    try {
      ClusterInfo cluster = producer.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl()
          .getBrokerClusterInfo(sendTimeout.toMillis());
      if (cluster == null || cluster.getBrokerAddrTable() == null) {
        return false;
      }
      for (BrokerData b : cluster.getBrokerAddrTable().values()) {
        if (b.getBrokerAddrs() != null && !b.getBrokerAddrs().isEmpty()) {
          return true;
        }
      }
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Exception e) {
      LOG.debug("Cannot read the RocketMQ cluster info: {}", e.toString());
      return false;
    }
  }

  void close() {
    producer.shutdown();
  }
}
