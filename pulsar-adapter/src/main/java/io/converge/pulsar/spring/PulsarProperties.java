package io.converge.pulsar.spring;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code converge.pulsar.*}: the Pulsar backend, and the Pulsar binding of {@code @IdempotentConsumer},
 * of a Spring Boot application with {@code converge.producer.mode=pulsar}. A null value takes the
 * builder's default.
 *
 * @param serviceUrl the Pulsar service URL, {@code pulsar://host:6650}; required
 * @param transactionTimeout Pulsar transaction timeout; default the local-transaction timeout plus the commit margin
 * @param commitMargin time left before the deadline under which a unit is refused; default 5 s
 * @param sendTimeout longest open, send or commit; default 3 s
 * @param recoveryInterval time between recovery scans; default 5 s
 * @param recoveryMaxAttempts recovery attempts before a transaction Pulsar refuses is parked, 1-1000; default 10
 * @param consumer the consumer binding
 */
@ConfigurationProperties("converge.pulsar")
public record PulsarProperties(
    String serviceUrl,
    Duration transactionTimeout,
    Duration commitMargin,
    Duration sendTimeout,
    Duration recoveryInterval,
    Integer recoveryMaxAttempts,
    Consumer consumer) {

  /**
   * {@code converge.pulsar.consumer.*}.
   *
   * @param enabled whether {@code @IdempotentConsumer} methods consume from Pulsar; default true
   * @param consumers consumers per subscription (Key_Shared), 1-64; default 4
   * @param redeliveryDelay delay of a negatively acknowledged message; default 1 s
   * @param receiverQueueSize messages each consumer prefetches, 1-10000; default 100
   * @param releaseInterval how often the messages held behind a discarded parked message of their key are run;
   *     10ms..1h, default 5 s
   */
  public record Consumer(Boolean enabled, Integer consumers, Duration redeliveryDelay, Integer receiverQueueSize,
      Duration releaseInterval) {
  }
}
