package io.converge.outbox.spring;

import io.converge.core.tracing.Tracing;
import io.converge.outbox.DeliverySettings;
import io.converge.outbox.micrometer.MicrometerRelayMetrics;
import io.converge.outbox.OutboxBackend;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.OutboxRelayBuilder;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.RelayMetrics;
import io.converge.producer.TxnProducer;
import io.converge.producer.spring.ConvergeProducerConfiguration;
import io.converge.producer.spring.ProducerBackend;
import io.converge.producer.spring.TransactionalPublisher;
import io.converge.producer.spring.internal.MicrometerConfiguration;
import io.converge.producer.spring.internal.ProducerModeAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Spring Boot auto-configuration of the outbox when {@code converge.producer.mode=outbox}: the outbox
 * {@link ProducerBackend}, from which {@link ConvergeProducerConfiguration} makes a {@link TxnProducer}
 * and a {@link TransactionalPublisher} on the application's {@code DataSource} (with
 * {@code converge.producer.*} and producer metrics as in every mode), and, unless
 * {@code converge.outbox.relay-enabled=false}, a started {@link OutboxRelay} publishing through the application's {@link OutboxSink} bean if it has one, else
 * the sink named by {@code converge.outbox.sink} ({@code rocketmq} by default; {@code pulsar} comes from
 * {@code converge-pulsar-adapter}'s auto-configuration). Each bean is replaceable by one's own.
 */
@ProducerModeAutoConfiguration("outbox")
@EnableConfigurationProperties(OutboxProperties.class)
class OutboxAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  ProducerBackend convergeProducerBackend() {
    return ProducerBackend.of(OutboxBackend::outbox, "producer", "outbox");
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  @ConditionalOnBean(DataSource.class)
  @ConditionalOnProperty(prefix = "converge.outbox", name = "relay-enabled", havingValue = "true", matchIfMissing = true)
  OutboxRelay convergeOutboxRelay(OutboxProperties p, DataSource dataSource, ObjectProvider<RelayMetrics> metrics,
      ObjectProvider<OutboxSink> sinks, ObjectProvider<Tracing> tracing) {
    OutboxSink sink = sinks.getIfUnique();
    if (sink == null) {
      sink = defaultSink(p);
    }
    OutboxRelayBuilder b = OutboxRelay.builder().dataSource(dataSource).sink(sink)
        .tracing(tracing.getIfAvailable(Tracing::global));
    if (p.batchSize() != null) {
      b.batchSize(p.batchSize());
    }
    if (p.maxAttempts() != null) {
      b.maxAttempts(p.maxAttempts());
    }
    if (p.retention() != null) {
      b.retention(p.retention());
    }
    if (p.purgeInterval() != null) {
      b.purgeInterval(p.purgeInterval());
    }
    if (p.outageBackoffMax() != null) {
      b.brokerBackoff(DeliverySettings.DEFAULT_BROKER_BACKOFF_BASE, p.outageBackoffMax());
    }
    if (p.retryBackoffBase() != null || p.retryBackoffMax() != null) {
      b.retryBackoff(p.retryBackoffBase() != null ? p.retryBackoffBase() : DeliverySettings.DEFAULT_RETRY_BASE,
          p.retryBackoffMax() != null ? p.retryBackoffMax() : DeliverySettings.DEFAULT_RETRY_MAX);
    }
    RelayMetrics m = metrics.getIfAvailable();
    if (m != null) {
      b.metrics(m);
    }
    OutboxRelay relay = b.build();
    relay.start();
    return relay;
  }

  /** The sink named by {@code converge.outbox.sink} when the application has no {@link OutboxSink} bean. */
  private static OutboxSink defaultSink(OutboxProperties p) {
    String kind = p.sink() == null ? "rocketmq" : p.sink().trim().toLowerCase(java.util.Locale.ROOT);
    switch (kind) {
      case "rocketmq" -> {
        if (!org.springframework.util.ClassUtils.isPresent("org.apache.rocketmq.client.producer.DefaultMQProducer",
            OutboxAutoConfiguration.class.getClassLoader())) {
          throw new IllegalStateException(
              "converge.outbox.sink=rocketmq needs org.apache.rocketmq:rocketmq-client on the "
                  + "classpath (or set converge.outbox.relay-enabled=false, or define an OutboxSink bean)");
        }
        return RocketMQSink.nameServer(Objects.requireNonNull(p.nameServer(),
            "converge.outbox.name-server is required by the RocketMQ sink")).build();
      }
      case "pulsar" ->
        throw new IllegalStateException("converge.outbox.sink=pulsar needs io.converge:converge-pulsar-adapter "
            + "on the classpath and converge.pulsar.service-url (its auto-configuration provides the sink)");
      default ->
        throw new IllegalArgumentException("converge.outbox.sink must be rocketmq or pulsar, but was " + p.sink());
    }
  }

  /** Micrometer metrics for the relay, when Micrometer and a registry are there. */
  @MicrometerConfiguration
  static class Metrics {

    @Bean
    @ConditionalOnMissingBean
    RelayMetrics convergeRelayMetrics(MeterRegistry registry) {
      return MicrometerRelayMetrics.of(registry);
    }
  }
}
