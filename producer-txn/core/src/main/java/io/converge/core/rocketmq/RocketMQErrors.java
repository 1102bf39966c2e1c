package io.converge.core.rocketmq;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import io.converge.core.InvalidMessageException;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.apache.rocketmq.client.common.ClientErrorCode;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where a RocketMQ failure is classified, for the half-message backend, the outbox sink
 * and whoever else sends (issues 13.14, 14, 19):
 *
 * <ul>
 *   <li>a refusal of the message itself is an {@link InvalidMessageException}: a message the client or
 *       broker finds illegal (too large, bad properties), no permission, the broker's TOPIC_NOT_EXIST,
 *       and no route to the topic <em>while the name servers list a live broker</em> (the topic does
 *       not exist);
 *   <li>anything else is a {@link BrokerUnavailableException}, an outage to wait out: timeouts,
 *       connection errors, a busy broker, and no route while no broker is registered (all stopped or
 *       restarting) or the name servers cannot be asked.
 * </ul>
 *
 * <p>A send the broker answered with a status but {@code SEND_OK} ({@code FLUSH_DISK_TIMEOUT},
 * {@code FLUSH_SLAVE_TIMEOUT}, {@code SLAVE_NOT_AVAILABLE}) is not acknowledged ({@link #acknowledged}): the
 * master has the message, but not as durably as it is configured to keep it (fsync or the synchronous
 * slave missing), so it is lost if the master's machine dies now. Every sender treats it as a failed send
 * ({@link #notAcknowledged}, an outage): the half-message backend rolls the unit back, the outbox relay
 * sends the record again later. A re-send may store the message twice; consumers are idempotent, a lost
 * message cannot be repaired. An END has no such status: the broker answers {@code SUCCESS} for an END
 * COMMIT whose message it stored with any of them ({@code EndTransactionProcessor} of 5.4), and any other
 * answer means the END was not applied ({@link #endApplied}).
 *
 * <p>"No route" has one rule ({@link #noRoute}), whether a send reports it ({@link #isNoRoute}) or a
 * route fetch at start finds none. Converge-internal (see the package documentation). Stateless and
 * thread-safe.
 */
public final class RocketMQErrors {

  private static final Logger LOG = LoggerFactory.getLogger(RocketMQErrors.class);

  private RocketMQErrors() {
  }

  /**
   * The typed error for a failed send of message {@code messageId} to {@code topic}.
   *
   * @param e the failure the client threw or passed to a callback; not null
   * @param what how to name the message in the error text, e.g. {@code "half message"}; not null
   * @param messageId the message's id; may be null
   * @param topic the topic it was sent to; not null
   * @param brokersRegistered asked only for a "No route" failure: whether the name servers list at
   *     least one broker (see {@link #brokersRegistered(DefaultMQProducer, Duration)}); not null
   * @return an {@link InvalidMessageException} or a {@link BrokerUnavailableException}, with {@code e} as cause
   */
  public static ConvergeException classify(Throwable e, String what, String messageId, String topic,
      BooleanSupplier brokersRegistered) {
    if (e instanceof MQClientException ce && ce.getResponseCode() == ResponseCode.MESSAGE_ILLEGAL) {
      return new InvalidMessageException("RocketMQ refused " + subject(what, messageId) + " on " + topic + ": "
          + ce.getErrorMessage(), messageId, ce);
    }
    if (e instanceof MQBrokerException be && refusedByBroker(be.getResponseCode())) {
      return new InvalidMessageException("RocketMQ broker refused " + subject(what, messageId) + " on " + topic
          + ": " + be.getErrorMessage(), messageId, be);
    }
    if (isNoRoute(e)) {
      return noRoute(topic, what, messageId, e, brokersRegistered);
    }
    return new BrokerUnavailableException("RocketMQ is unavailable for " + subject(what, messageId) + " on " + topic
        + ": " + e, messageId, e);
  }

  /**
   * The one rule for a topic without route: it does not exist (an {@link InvalidMessageException}) if
   * the name servers list a live broker, else RocketMQ is down (a {@link BrokerUnavailableException}).
   * Both a send's "No route info" ({@link #classify}) and a route fetch that finds none come here.
   *
   * @param what how to name what needed the route, e.g. {@code "half message"}; not null
   * @param messageId may be null
   * @param cause the client's failure; may be null (a route fetch answers false)
   * @param brokersRegistered whether the name servers list at least one broker; not null
   */
  public static ConvergeException noRoute(String topic, String what, String messageId, Throwable cause,
      BooleanSupplier brokersRegistered) {
    String detail = cause instanceof MQClientException ce ? ": " + ce.getErrorMessage()
        : cause != null ? ": " + cause : "";
    if (brokersRegistered.getAsBoolean()) {
      return new InvalidMessageException("Topic " + topic + " is unknown to the RocketMQ name server although brokers"
          + " are up (the topic does not exist): cannot send " + subject(what, messageId) + detail, messageId, cause);
    }
    return new BrokerUnavailableException("RocketMQ has no route to topic " + topic + " and no broker registered"
        + " (all stopped or restarting, or the name server does not answer): cannot send " + subject(what, messageId)
        + detail, messageId, cause);
  }

  /**
   * Whether {@code e} is the client's "No route info" to a topic (the topic or every broker is
   * missing): the code {@code NOT_FOUND_TOPIC_EXCEPTION} of a plain send, or the text of a send to a
   * selected queue, which carries no code.
   */
  public static boolean isNoRoute(Throwable e) {
    return e instanceof MQClientException ce && (ce.getResponseCode() == ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION
        || (ce.getErrorMessage() != null && ce.getErrorMessage().contains("No route info")));
  }

  /**
   * Whether the name servers of {@code producer} (started) list at least one broker address, asked
   * within {@code timeout}. False when they cannot be asked: then RocketMQ is down as far as the caller
   * can tell. Restores the interrupt flag if interrupted.
   */
  public static boolean brokersRegistered(DefaultMQProducer producer, Duration timeout) {
    try {
      ClusterInfo cluster = producer.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl()
          .getBrokerClusterInfo(timeout.toMillis());
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

  /** {@link #brokersRegistered(DefaultMQProducer, Duration)} within the producer's send timeout, asked lazily. */
  public static BooleanSupplier brokersRegistered(DefaultMQProducer producer) {
    return () -> brokersRegistered(producer, Duration.ofMillis(producer.getSendMsgTimeout()));
  }

  /**
   * Whether a send answered {@code status} is acknowledged: only {@code SEND_OK}. Any other status (a flush
   * or the synchronous slave lagged or missing) counts as a failed send, see the class documentation.
   *
   * @param status the send's status; not null
   */
  public static boolean acknowledged(SendStatus status) {
    return status == SendStatus.SEND_OK;
  }

  /**
   * The failure for a send the broker stored without acknowledging it ({@link #acknowledged} false): a
   * {@link BrokerUnavailableException} naming the status, to be retried as an outage.
   *
   * @param result the send's result; not null
   * @param what how to name the message in the error text, e.g. {@code "half message"}; not null
   * @param messageId the message's id; may be null
   * @param topic the topic it was sent to; not null
   */
  public static BrokerUnavailableException notAcknowledged(SendResult result, String what, String messageId,
      String topic) {
    return new BrokerUnavailableException("RocketMQ stored " + subject(what, messageId) + " on " + topic
        + " with status " + result.getSendStatus() + " (on the master only, not flushed or replicated as configured):"
        + " counted as a failed send", messageId, null);
  }

  /**
   * Whether an END answered with {@code responseCode} was applied: only {@code SUCCESS}, which the broker
   * also answers when it stored the committed message with a flush or slave status. Anything else
   * ({@code SLAVE_NOT_AVAILABLE} from a slave, a busy or failing broker) leaves the half message to the
   * check-back.
   */
  public static boolean endApplied(int responseCode) {
    return responseCode == ResponseCode.SUCCESS;
  }

  private static String subject(String what, String messageId) {
    return messageId == null ? what : what + " " + messageId;
  }

  private static boolean refusedByBroker(int code) {
    return code == ResponseCode.MESSAGE_ILLEGAL || code == ResponseCode.NO_PERMISSION
        || code == ResponseCode.TOPIC_NOT_EXIST;
  }
}
