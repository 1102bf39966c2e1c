package io.converge.outbox.rocketmq;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.InvalidMessageException;
import java.time.Duration;
import java.util.Map;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The RocketMQ client of a {@link RocketMQSink}; loaded only when rocketmq-client is present. */
final class RocketMQClient {

  private static final Logger LOG = LoggerFactory.getLogger(RocketMQClient.class);
  /** One key, one queue: its messages keep their order (same rule as the half-message backend). */
  private static final MessageQueueSelector BY_KEY =
      (queues, msg, key) -> queues.get(Math.floorMod(key.hashCode(), queues.size()));

  private final DefaultMQProducer producer;

  RocketMQClient(String nameServer, String group, String instance, Duration sendTimeout, int maxMessageBytes) {
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
    String key = r.key() != null ? r.key() : r.messageId();
    Message msg = new Message(r.topic(), r.tag(), key, r.payload());
    for (Map.Entry<String, String> h : r.headers().entrySet()) {
      msg.putUserProperty(h.getKey(), h.getValue());
    }
    SendResult result;
    try {
      result = producer.send(msg, BY_KEY, key);
    } catch (MQClientException e) {
      if (e.getResponseCode() == ResponseCode.MESSAGE_ILLEGAL) {
        throw new InvalidMessageException("RocketMQ refused message " + r.messageId() + " on " + r.topic() + ": "
            + e.getErrorMessage(), r.messageId(), e);
      }
      throw unavailable(r, e);
    } catch (MQBrokerException e) {
      if (e.getResponseCode() == ResponseCode.MESSAGE_ILLEGAL || e.getResponseCode() == ResponseCode.NO_PERMISSION) {
        throw new InvalidMessageException("RocketMQ broker refused message " + r.messageId() + " on " + r.topic()
            + ": " + e.getErrorMessage(), r.messageId(), e);
      }
      throw unavailable(r, e);
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      throw unavailable(r, e);
    }
    if (result.getSendStatus() != SendStatus.SEND_OK) {
      // stored on the master; a flush or slave sync lagged
      LOG.debug("Message {} stored with status {}", r.messageId(), result.getSendStatus());
    }
  }

  private static BrokerUnavailableException unavailable(OutboxRecord r, Exception e) {
    return new BrokerUnavailableException("RocketMQ is unavailable for message " + r.messageId() + " on " + r.topic()
        + ": " + e, r.messageId(), e);
  }

  void close() {
    producer.shutdown();
  }
}
