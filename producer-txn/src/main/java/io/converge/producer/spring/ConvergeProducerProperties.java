package io.converge.producer.spring;

import io.converge.producer.TxnProducerBuilder;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code converge.producer.*}: the producer of a Spring Boot application.
 *
 * @param mode the backend: {@code rocketmq} (this module), {@code pulsar} or {@code outbox} (their modules)
 * @param group the producer group; default {@code spring.application.name} is not assumed: required
 * @param nameServer RocketMQ name server list, {@code host:port[;host:port]}
 * @param topics topics registered at start
 * @param maxPayloadBytes largest payload; default 4 MiB
 * @param maxUnitBytes the most payload bytes of one unit of work, its messages together; default 256 MiB
 * @param maxUnitMessages the most messages of one unit of work; default 100,000
 * @param localTransactionTimeout longest transaction; default 30 s
 * @param logRetention transaction-log retention; default 7 days
 * @param brokerCheckWindow the broker's longest check window (RocketMQ: transactionCheckMax x
 *     transactionCheckInterval); default 7.5 min
 * @param migrate whether to apply the producer's migrations at start; default true
 * @param sign sign every message with the current key of the {@code SigningKeys} bean ({@code converge.signing.*});
 *     default false
 */
@ConfigurationProperties("converge.producer")
public record ConvergeProducerProperties(
    String mode,
    String group,
    String nameServer,
    List<String> topics,
    Integer maxPayloadBytes,
    Long maxUnitBytes,
    Integer maxUnitMessages,
    Duration localTransactionTimeout,
    Duration logRetention,
    Duration brokerCheckWindow,
    Boolean migrate,
    Boolean sign) {

  /**
   * Sets on {@code b} the group, the data source and the settings given here ({@code topics},
   * {@code max-payload-bytes}, {@code max-unit-bytes}, {@code max-unit-messages}, {@code local-transaction-timeout}, {@code log-retention}, {@code broker-check-window}), for every
   * backend's auto-configuration; unset ones keep the builder's defaults.
   *
   * @throws NullPointerException naming {@code converge.producer.group} when it is not set
   */
  public TxnProducerBuilder applyTo(TxnProducerBuilder b, javax.sql.DataSource dataSource) {
    b.group(java.util.Objects.requireNonNull(group, "converge.producer.group is required")).dataSource(dataSource);
    if (topics != null) {
      b.topics(topics.toArray(String[]::new));
    }
    if (maxPayloadBytes != null) {
      b.maxPayloadBytes(maxPayloadBytes);
    }
    if (maxUnitBytes != null) {
      b.maxUnitBytes(maxUnitBytes);
    }
    if (maxUnitMessages != null) {
      b.maxUnitMessages(maxUnitMessages);
    }
    if (localTransactionTimeout != null) {
      b.localTransactionTimeout(localTransactionTimeout);
    }
    if (logRetention != null) {
      b.logRetention(logRetention);
    }
    if (brokerCheckWindow != null) {
      b.brokerCheckWindow(brokerCheckWindow);
    }
    return b;
  }
}
