package io.converge.consumer.spring;

import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.ConsumerOps;
import io.converge.consumer.DedupPurger;
import io.converge.consumer.TransactionRunner;
import io.converge.consumer.spi.ConsumerBinding;
import io.converge.core.Migrations;
import java.time.Clock;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * Spring Boot auto-configuration of consumer-idem: the consumer tables, a Spring-aware
 * {@link TransactionRunner}, {@link ConsumerOps}, the dedup purge, metrics when Micrometer is present,
 * and the subscription of every {@code @IdempotentConsumer} method. Every bean backs off when the
 * application defines its own.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass(DataSourceTransactionManager.class)
@ConditionalOnBean(DataSource.class)
@ConditionalOnProperty(prefix = "converge.consumer", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(ConsumerProperties.class)
class ConvergeConsumerAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  ConsumerOps convergeConsumerOps(DataSource dataSource, ConsumerProperties properties) {
    if (properties.migrate()) {
      Migrations.apply(dataSource, "consumer");
    }
    return ConsumerOps.of(dataSource, Clock.systemUTC());
  }

  @Bean
  @ConditionalOnMissingBean
  TransactionRunner convergeConsumerTransactions(DataSource dataSource,
      ObjectProvider<PlatformTransactionManager> transactionManager) {
    PlatformTransactionManager tm = transactionManager.getIfUnique(() -> new DataSourceTransactionManager(dataSource));
    return new SpringTransactionRunner(tm, dataSource);
  }

  @Bean
  @ConditionalOnMissingBean
  DedupPurger convergeDedupPurger(DataSource dataSource, ConsumerProperties properties) {
    return new DedupPurger(dataSource, properties.dedup().retention(), properties.dedup().purgeBatchSize(),
        Clock.systemUTC());
  }

  @Bean
  PurgeScheduler convergeDedupPurgeScheduler(DedupPurger purger, ConsumerProperties properties) {
    return new PurgeScheduler("converge-dedup-purge", purger::purgeExpired, properties.dedup().purgeInterval(),
        "converge.consumer.dedup.purge-interval");
  }

  @Bean
  @ConditionalOnMissingBean
  ConsumerMetrics convergeConsumerMetrics(ApplicationContext context, ConsumerOps ops) {
    return MicrometerSupport.metrics(context, ops);
  }

  @Bean
  IdempotentConsumerRegistrar convergeIdempotentConsumers(ApplicationContext context, ConsumerProperties properties,
      TransactionRunner transactions, ConsumerMetrics metrics, ConsumerOps ops,
      ObjectProvider<ConsumerBinding> binding) {
    return new IdempotentConsumerRegistrar(context, properties, transactions, metrics, binding.getIfUnique());
  }

  /** Keeps Micrometer types out of the configuration class, so that it loads without Micrometer. */
  static final class MicrometerSupport {

    private MicrometerSupport() {
    }

    static ConsumerMetrics metrics(ApplicationContext context, ConsumerOps ops) {
      if (!ClassPresence.micrometer()) {
        return ConsumerMetrics.NONE;
      }
      return MicrometerBridge.metrics(context, ops);
    }
  }

  static final class ClassPresence {

    private ClassPresence() {
    }

    static boolean micrometer() {
      return org.springframework.util.ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry",
          ConvergeConsumerAutoConfiguration.class.getClassLoader());
    }
  }
}
