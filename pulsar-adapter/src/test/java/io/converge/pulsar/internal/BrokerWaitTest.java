package io.converge.pulsar.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.transaction.TransactionCoordinatorClientException;
import org.junit.jupiter.api.Test;

/** What the start-up wait waits out and what it fails at once, without a broker (the real one is PulsarStartupWaitIT). */
class BrokerWaitTest {

  @Test
  void anUnavailableBrokerIsAStartupOutageAndAnAnswerOfTheBrokerIsNot() {
    assertThat(PulsarErrors.isStartupOutage(new PulsarClientException.TimeoutException("lookup timed out"))).isTrue();
    assertThat(PulsarErrors.isStartupOutage(new PulsarClientException(
        new java.net.ConnectException("Connection refused")))).isTrue();
    assertThat(PulsarErrors.isStartupOutage(new ExecutionException(
        new PulsarClientException.LookupException("lookup failed")))).isTrue();
    assertThat(PulsarErrors.isStartupOutage(new PulsarClientException(
        new TransactionCoordinatorClientException.CoordinatorNotFoundException("no coordinator")))).isTrue();
    assertThat(PulsarErrors.isStartupOutage(new ConvergeException("partitions",
        new java.util.concurrent.TimeoutException()))).isTrue();

    assertThat(PulsarErrors.isStartupOutage(new PulsarClientException.InvalidServiceURL("bad", null))).isFalse();
    assertThat(PulsarErrors.isStartupOutage(new PulsarClientException.AuthorizationException("denied"))).isFalse();
    assertThat(PulsarErrors.isStartupOutage(new PulsarClientException.AuthenticationException("who"))).isFalse();
    assertThat(PulsarErrors.isStartupOutage(new PulsarClientException.ConsumerBusyException("exclusive")))
        .isFalse();
    assertThat(PulsarErrors.isStartupOutage(new PulsarClientException.NotAllowedException("no"))).isFalse();
    // a refusal wrapped around a timeout is still a refusal
    PulsarClientException denied = new PulsarClientException.AuthorizationException("denied");
    denied.initCause(new PulsarClientException.TimeoutException("t"));
    assertThat(PulsarErrors.isStartupOutage(denied)).isFalse();
    assertThat(PulsarErrors.isStartupOutage(new IllegalStateException("bug"))).isFalse();
    // as a frozen broker's handshake timeout reaches the transactions client's build()
    assertThat(PulsarErrors.isStartupOutage(new PulsarClientException(new TransactionCoordinatorClientException(
        new PulsarClientException("Connection already closed"))))).isTrue();
  }

  @Test
  void aRefusalFailsAtOnceAndAnOutageIsRetriedUntilTheLimitNamingIt() {
    AtomicInteger attempts = new AtomicInteger();
    BrokerWait wait = BrokerWait.upTo(Duration.ofSeconds(1));
    assertThatThrownBy(() -> wait.run("the test", "pulsar://h:6650", () -> {
      attempts.incrementAndGet();
      throw new PulsarClientException.AuthorizationException("denied");
    })).isInstanceOf(ConvergeException.class).isNotInstanceOf(BrokerUnavailableException.class)
        .hasMessageContaining("denied");
    assertThat(attempts).hasValue(1);

    attempts.set(0);
    long start = System.nanoTime();
    assertThatThrownBy(() -> wait.run("the test", "pulsar://h:6650", () -> {
      attempts.incrementAndGet();
      throw new PulsarClientException.TimeoutException("lookup timed out");
    })).isInstanceOf(BrokerUnavailableException.class)
        .hasMessageContaining("Pulsar at pulsar://h:6650 did not answer the test within pulsar.startupWait=1s")
        .hasMessageContaining("converge.startup.broker-wait");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
    assertThat(attempts.get()).isBetween(2, 3); // 0.5 s, then the 0.5 s left

    attempts.set(0);
    assertThatThrownBy(() -> BrokerWait.upTo(Duration.ZERO).run("the test", "pulsar://h:6650", () -> {
      attempts.incrementAndGet();
      throw new PulsarClientException.TimeoutException("lookup timed out");
    })).isInstanceOf(BrokerUnavailableException.class).hasMessageContaining("pulsar.startupWait=0s");
    assertThat(attempts).hasValue(1);

    AtomicInteger flaky = new AtomicInteger();
    assertThat(BrokerWait.upTo(Duration.ofSeconds(5)).run("the test", "pulsar://h:6650", () -> {
      if (flaky.incrementAndGet() == 1) {
        throw new PulsarClientException.ConnectException("Connection refused");
      }
      return "started";
    })).isEqualTo("started");
    assertThat(flaky).hasValue(2);
  }

  @Test
  void aBadLimitIsRejectedQuotingIt() {
    assertThatThrownBy(() -> BrokerWait.check(BrokerWait.PROPERTY, Duration.ofSeconds(-5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("converge.startup.broker-wait must be between 0 and 1h, but was PT-5S");
    assertThatThrownBy(() -> BrokerWait.upTo(Duration.ofHours(2)))
        .hasMessage("pulsar.startupWait must be between 0 and 1h, but was PT2H");
  }
}
