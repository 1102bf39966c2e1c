package io.converge.core.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import io.converge.core.InvalidMessageException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.rocketmq.client.common.ClientErrorCode;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.remoting.exception.RemotingConnectException;
import org.apache.rocketmq.remoting.exception.RemotingSendRequestException;
import org.apache.rocketmq.remoting.exception.RemotingTimeoutException;
import org.apache.rocketmq.remoting.exception.RemotingTooMuchRequestException;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The classification of each failure the backend and the sink meet, without servers. */
class RocketMQErrorsTest {

  private static final BooleanSupplier UP = () -> true;
  private static final BooleanSupplier DOWN = () -> false;

  @ParameterizedTest
  @EnumSource(SendStatus.class)
  void onlySendOkIsAnAcknowledgedSend(SendStatus status) {
    // FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE: on the master, not as durable as configured
    assertThat(RocketMQErrors.acknowledged(status)).isEqualTo(status == SendStatus.SEND_OK);
  }

  @ParameterizedTest
  @EnumSource(value = SendStatus.class, names = "SEND_OK", mode = EnumSource.Mode.EXCLUDE)
  void aStoredButUnacknowledgedSendIsAnOutageNamingItsStatus(SendStatus status) {
    SendResult result = new SendResult();
    result.setSendStatus(status);
    BrokerUnavailableException e = RocketMQErrors.notAcknowledged(result, "message", "m1", "t1");
    assertThat(e).hasMessageContaining("m1").hasMessageContaining("t1").hasMessageContaining(status.name());
    assertThat(e.messageId()).isEqualTo("m1");
  }

  @Test
  void onlyASuccessAnswerAppliedAnEnd() {
    assertThat(RocketMQErrors.endApplied(ResponseCode.SUCCESS)).isTrue();
    for (int code : new int[]{ResponseCode.SLAVE_NOT_AVAILABLE, ResponseCode.FLUSH_DISK_TIMEOUT,
        ResponseCode.FLUSH_SLAVE_TIMEOUT, ResponseCode.SYSTEM_BUSY, ResponseCode.SYSTEM_ERROR}) {
      assertThat(RocketMQErrors.endApplied(code)).as("code %d", code).isFalse();
    }
  }

  @Test
  void aMessageTheClientFindsIllegalIsRefused() {
    ConvergeException e = classify(
        new MQClientException(ResponseCode.MESSAGE_ILLEGAL, "the message body size over max value"), DOWN);
    assertThat(e).isInstanceOf(InvalidMessageException.class).hasMessageContaining("m1").hasMessageContaining("t1")
        .hasMessageContaining("body size over max");
    assertThat(e.messageId()).isEqualTo("m1");
  }

  @ParameterizedTest
  @ValueSource(ints = {ResponseCode.MESSAGE_ILLEGAL, ResponseCode.NO_PERMISSION, ResponseCode.TOPIC_NOT_EXIST})
  void aMessageTheBrokerRefusesIsRefused(int code) {
    ConvergeException e = classify(new MQBrokerException(code, "refused by the broker"), DOWN);
    assertThat(e).isInstanceOf(InvalidMessageException.class).hasMessageContaining("broker refused")
        .hasCauseInstanceOf(MQBrokerException.class);
    assertThat(e.messageId()).isEqualTo("m1");
  }

  @ParameterizedTest
  @ValueSource(ints = {ResponseCode.SYSTEM_BUSY, ResponseCode.SYSTEM_ERROR, ResponseCode.SERVICE_NOT_AVAILABLE,
      ResponseCode.FLUSH_DISK_TIMEOUT, ResponseCode.SLAVE_NOT_AVAILABLE})
  void anyOtherBrokerAnswerIsAnOutage(int code) {
    assertThat(classify(new MQBrokerException(code, "busy"), UP)).isInstanceOf(BrokerUnavailableException.class);
  }

  @Test
  void timeoutsAndConnectionErrorsAreOutages() {
    for (Throwable t : new Throwable[]{new RemotingTimeoutException("wait response timeout"),
        new RemotingConnectException("127.0.0.1:10911"), new RemotingSendRequestException("127.0.0.1:10911"),
        new RemotingTooMuchRequestException("sendDefaultImpl call timeout"),
        new MQClientException("Send [1] times, still failed", new RemotingTimeoutException("x")),
        new MQClientException(ClientErrorCode.CONNECT_BROKER_EXCEPTION, "connect failed"),
        new IllegalStateException("org.apache.rocketmq.remoting.exception.RemotingConnectException"),
        new InterruptedException()}) {
      ConvergeException e = classify(t, UP);
      assertThat(e).as(t.toString()).isInstanceOf(BrokerUnavailableException.class).hasCause(t);
      assertThat(e.messageId()).isEqualTo("m1");
    }
  }

  /** Both forms of "No route info": a plain send's (with a code) and a selected queue's (text only). */
  @Test
  void noRouteIsRecognisedInBothForms() {
    MQClientException plain = new MQClientException(ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION,
        "No route info of this topic: t1");
    MQClientException selected = new MQClientException("No route info for this topic, t1", null);
    assertThat(RocketMQErrors.isNoRoute(plain)).isTrue();
    assertThat(RocketMQErrors.isNoRoute(selected)).isTrue();
    assertThat(RocketMQErrors.isNoRoute(new MQClientException(ResponseCode.MESSAGE_ILLEGAL, "too big"))).isFalse();
    assertThat(RocketMQErrors.isNoRoute(new MQBrokerException(ResponseCode.TOPIC_NOT_EXIST, "No route info")))
        .isFalse();
    assertThat(RocketMQErrors.isNoRoute(new RemotingTimeoutException("No route info"))).isFalse();
  }

  @Test
  void noRouteWhileBrokersAreUpIsAMissingTopic() {
    for (MQClientException e : new MQClientException[]{
        new MQClientException(ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION, "No route info of this topic: t1"),
        new MQClientException("No route info for this topic, t1", null)}) {
      assertThat(classify(e, UP)).isInstanceOf(InvalidMessageException.class)
          .hasMessageContaining("Topic t1 is unknown to the RocketMQ name server").hasMessageContaining("m1")
          .hasCause(e);
      assertThat(classify(e, DOWN)).isInstanceOf(BrokerUnavailableException.class).hasMessageContaining("t1")
          .hasCause(e);
    }
  }

  /** A route fetch that finds none (no exception) follows the same rule as a send's "No route info". */
  @Test
  void aRouteFetchWithoutRouteFollowsTheSameRule() {
    assertThat(RocketMQErrors.noRoute("t1", "the messages of producer group g", null, null, UP))
        .isInstanceOf(InvalidMessageException.class)
        .hasMessageContaining("Topic t1 is unknown to the RocketMQ name server")
        .hasNoCause();
    assertThat(RocketMQErrors.noRoute("t1", "the messages of producer group g", null, null, DOWN))
        .isInstanceOf(BrokerUnavailableException.class).hasMessageContaining("t1");
  }

  /** Asking the name server costs a round trip: only a "No route" failure asks it. */
  @Test
  void theBrokerRegistryIsAskedOnlyForNoRoute() {
    AtomicInteger asked = new AtomicInteger();
    BooleanSupplier counting = () -> asked.incrementAndGet() > 0;
    classify(new MQClientException(ResponseCode.MESSAGE_ILLEGAL, "too big"), counting);
    classify(new MQBrokerException(ResponseCode.NO_PERMISSION, "no"), counting);
    classify(new RemotingTimeoutException("timeout"), counting);
    assertThat(asked).hasValue(0);
    classify(new MQClientException("No route info for this topic, t1", null), counting);
    assertThat(asked).hasValue(1);
  }

  private static ConvergeException classify(Throwable e, BooleanSupplier brokersRegistered) {
    return RocketMQErrors.classify(e, "message", "m1", "t1", brokersRegistered);
  }
}
