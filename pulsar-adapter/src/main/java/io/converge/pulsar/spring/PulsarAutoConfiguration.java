package io.converge.pulsar.spring;

import io.converge.consumer.spi.ConsumerBinding;
import io.converge.producer.TxnProducer;
import io.converge.producer.spring.ConvergeProducerConfiguration;
import io.converge.producer.spring.ProducerBackend;
import io.converge.producer.spring.TransactionalPublisher;
import io.converge.producer.spring.internal.ProducerModeAutoConfiguration;
import io.converge.pulsar.PulsarBackend;
import io.converge.pulsar.PulsarIdempotentConsumer;
import io.converge.pulsar.internal.BrokerWait;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Objects;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Spring Boot auto-configuration of the Pulsar backend when {@code converge.producer.mode=pulsar}: the
 * {@link PulsarBackend} {@link ProducerBackend}, from which {@link ConvergeProducerConfiguration} makes a
 * {@link TxnProducer} and a {@link TransactionalPublisher} on the application's {@code DataSource}, and,
 * unless {@code converge.pulsar.consumer.enabled=false}, the Pulsar {@link ConsumerBinding} under
 * {@code @IdempotentConsumer}. Each bean backs off when the application
 * defines its own. Both wait up to {@code converge.startup.broker-wait} (default 60 s, 0 = fail at once) for a
 * Pulsar that is unavailable at start-up.
 */
@ProducerModeAutoConfiguration("pulsar")
@ConditionalOnClass(name = "org.apache.pulsar.client.api.PulsarClient")
@EnableConfigurationProperties(PulsarProperties.class)
class PulsarAutoConfiguration {

  private static final String METER_REGISTRY = "io.micrometer.core.instrument.MeterRegistry";

  @Bean
  @ConditionalOnMissingBean
  ProducerBackend convergeProducerBackend(PulsarProperties pulsar, BeanFactory beans, Environment environment) {
    Duration wait = startupWait(environment);
    return ProducerBackend.of(() -> backend(pulsar, beans, wait), "producer", "pulsar");
  }

  /**
   * {@code converge.startup.broker-wait}, next to {@code converge.startup.database-wait}: how long a start waits
   * for the broker (default 60 s, 0..1 h); a bad value fails the start quoting it.
   */
  static Duration startupWait(Environment environment) {
    Duration wait = Binder.get(environment).bind(BrokerWait.PROPERTY, Duration.class)
        .orElse(BrokerWait.DEFAULT_LIMIT);
    return BrokerWait.check(BrokerWait.PROPERTY, wait);
  }

  private static PulsarBackend backend(PulsarProperties pulsar, BeanFactory beans, Duration wait) {
    PulsarBackend.Builder backend = PulsarBackend.builder(serviceUrl(pulsar)).startupWait(wait);
    if (pulsar.transactionTimeout() != null) {
      backend.transactionTimeout(pulsar.transactionTimeout());
    }
    if (pulsar.commitMargin() != null) {
      backend.commitMargin(pulsar.commitMargin());
    }
    if (pulsar.sendTimeout() != null) {
      backend.sendTimeout(pulsar.sendTimeout());
    }
    if (pulsar.recoveryInterval() != null) {
      backend.recoveryInterval(pulsar.recoveryInterval());
    }
    if (pulsar.recoveryMaxAttempts() != null) {
      backend.recoveryMaxAttempts(pulsar.recoveryMaxAttempts());
    }
    if (ClassUtils.isPresent(METER_REGISTRY, PulsarAutoConfiguration.class.getClassLoader())) {
      Meters.apply(beans, backend);
    }
    return backend.build();
  }

  /** Micrometer is optional: its types are touched only in here, and only when it is on the classpath. */
  private static final class Meters {

    static void apply(BeanFactory beans, PulsarBackend.Builder backend) {
      MeterRegistry meters = beans.getBeanProvider(MeterRegistry.class).getIfAvailable();
      if (meters != null) {
        backend.meterRegistry(meters);
      }
    }
  }

  /** The transport of every {@code @IdempotentConsumer} method: a Key_Shared subscription per group. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.converge.consumer.spi.ConsumerBinding")
  @ConditionalOnProperty(prefix = "converge.pulsar.consumer", name = "enabled", havingValue = "true", matchIfMissing = true)
  static class Consumers {

    @Bean
    @ConditionalOnMissingBean
    ConsumerBinding convergePulsarConsumerBinding(PulsarProperties pulsar, Environment environment) {
      String url = serviceUrl(pulsar);
      Duration wait = startupWait(environment);
      PulsarProperties.Consumer c = pulsar.consumer();
      return PulsarIdempotentConsumer.binding(() -> {
        PulsarIdempotentConsumer.Builder b = PulsarIdempotentConsumer.builder().serviceUrl(url).startupWait(wait);
        if (c != null && c.consumers() != null) {
          b.consumers(c.consumers());
        }
        if (c != null && c.redeliveryDelay() != null) {
          b.redeliveryDelay(c.redeliveryDelay());
        }
        if (c != null && c.receiverQueueSize() != null) {
          b.receiverQueueSize(c.receiverQueueSize());
        }
        if (c != null && c.releaseInterval() != null) {
          b.releaseInterval(c.releaseInterval());
        }
        return b;
      });
    }
  }

  private static String serviceUrl(PulsarProperties pulsar) {
    return Objects.requireNonNull(pulsar.serviceUrl(), "converge.pulsar.service-url is required");
  }
}
