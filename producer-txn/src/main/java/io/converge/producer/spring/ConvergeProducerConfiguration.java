package io.converge.producer.spring;

import io.converge.core.SigningKeys;
import io.converge.core.tracing.Tracing;
import io.converge.producer.micrometer.MicrometerProducerMetrics;
import io.converge.producer.TxnProducer;
import io.converge.producer.TxnProducerBuilder;
import io.converge.core.Migrations;
import io.converge.producer.spring.internal.MicrometerConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The one Spring path of the producer, for every {@code converge.producer.mode}: imported by each mode's
 * auto-configuration, which defines the {@link ProducerBackend} bean. It applies the migrations, maps
 * {@code converge.producer.*} ({@link ConvergeProducerProperties#applyTo}), counts into the application's
 * Micrometer registry ({@link ProducerMetricsFactory}) and makes the {@link TxnProducer} and its
 * {@link TransactionalPublisher} on the application's {@code DataSource}; each bean is replaceable by
 * one's own. Not meant to be imported by applications.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ConvergeProducerProperties.class)
public class ConvergeProducerConfiguration {

  ConvergeProducerConfiguration() {
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  @ConditionalOnBean(DataSource.class)
  TxnProducer convergeTxnProducer(ConvergeProducerProperties p, DataSource dataSource, ProducerBackend backend,
      ObjectProvider<ProducerMetricsFactory> metrics, ObjectProvider<Tracing> tracing,
      ObjectProvider<SigningKeys> signingKeys) {
    String group = Objects.requireNonNull(p.group(), "converge.producer.group is required");
    if (!Boolean.FALSE.equals(p.migrate())) {
      backend.migrations().forEach(module -> Migrations.apply(dataSource, module));
    }
    TxnProducerBuilder b = p.applyTo(TxnProducer.builder(), dataSource).backend(backend.factory().get());
    b.tracing(tracing.getIfAvailable(Tracing::global)); // the OpenTelemetry bean's, with the API
    if (Boolean.TRUE.equals(p.sign())) {
      SigningKeys keys = signingKeys.getIfAvailable();
      if (keys == null) {
        throw new IllegalStateException("converge.producer.sign=true needs a SigningKeys bean: set "
            + "converge.signing.current-key-id and converge.signing.secrets.<id>, or declare one");
      }
      b.sign(keys);
    }
    ProducerMetricsFactory factory = metrics.getIfAvailable();
    if (factory != null) {
      b.metrics(factory.forGroup(group));
    }
    return b.build();
  }

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBean({TxnProducer.class, DataSource.class})
  TransactionalPublisher convergeTransactionalPublisher(TxnProducer producer, DataSource dataSource) {
    return new TransactionalPublisher(producer, dataSource);
  }

  /** Micrometer metrics, when Micrometer and a registry are there. */
  @MicrometerConfiguration
  static class Metrics {

    @Bean
    @ConditionalOnMissingBean
    ProducerMetricsFactory convergeProducerMetrics(MeterRegistry registry) {
      return group -> new MicrometerProducerMetrics(registry, group);
    }
  }
}
