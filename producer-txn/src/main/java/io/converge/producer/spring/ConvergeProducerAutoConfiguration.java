package io.converge.producer.spring;

import io.converge.producer.MicrometerMetrics;
import io.converge.producer.TxnProducer;
import io.converge.producer.TxnProducerBuilder;
import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.producer.schema.Migrations;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Boot auto-configuration of the RocketMQ {@link TxnProducer} when
 * {@code converge.producer.mode=rocketmq}: a {@code TxnProducer} and a {@link TransactionalPublisher}
 * on the application's {@code DataSource}, each replaceable by a bean of one's own.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass(name = "org.apache.rocketmq.client.producer.TransactionMQProducer")
@ConditionalOnProperty(prefix = "converge.producer", name = "mode", havingValue = "rocketmq")
@EnableConfigurationProperties(ConvergeProducerProperties.class)
class ConvergeProducerAutoConfiguration {

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  @ConditionalOnBean(DataSource.class)
  TxnProducer convergeTxnProducer(ConvergeProducerProperties p, DataSource dataSource,
                                  ObjectProvider<ProducerMetricsFactory> metrics) {
    String group = Objects.requireNonNull(p.group(), "converge.producer.group is required");
    if (!Boolean.FALSE.equals(p.migrate())) {
      Migrations.apply(dataSource, "producer");
    }
    TxnProducerBuilder b = p.applyTo(TxnProducer.builder(), dataSource)
        .backend(RocketMQBackend.nameServer(Objects.requireNonNull(p.nameServer(), "converge.producer.name-server is required")));
    ProducerMetricsFactory factory = metrics.getIfAvailable();
    if (factory != null) {
      b.metrics(factory.forGroup(group));
    }
    return b.build();
  }

  /** Micrometer metrics, when Micrometer and a registry are there. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
  static class Metrics {
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(MeterRegistry.class)
    ProducerMetricsFactory convergeProducerMetrics(MeterRegistry registry) {
      return group -> new MicrometerMetrics(registry, group);
    }
  }

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBean({TxnProducer.class, DataSource.class})
  TransactionalPublisher convergeTransactionalPublisher(TxnProducer producer, DataSource dataSource) {
    return new TransactionalPublisher(producer, dataSource);
  }
}
