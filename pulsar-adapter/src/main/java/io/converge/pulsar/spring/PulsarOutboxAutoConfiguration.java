package io.converge.pulsar.spring;

import io.converge.outbox.spi.OutboxSink;
import io.converge.pulsar.PulsarOutboxSink;
import java.util.Objects;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The outbox on Pulsar in Spring Boot: with {@code converge.producer.mode=outbox} and
 * {@code converge.outbox.sink=pulsar}, the outbox relay (auto-configured by {@code converge-outbox-relay})
 * publishes through a {@link PulsarOutboxSink} on {@code converge.pulsar.service-url}, and, unless
 * {@code converge.pulsar.consumer.enabled=false}, {@code @IdempotentConsumer} methods consume from Pulsar
 * through the same {@code ConsumerBinding} as in {@code mode=pulsar}. The application's own
 * {@link OutboxSink} bean takes precedence.
 */
@AutoConfiguration(beforeName = "io.converge.outbox.spring.OutboxAutoConfiguration")
@ConditionalOnClass(name = {"org.apache.pulsar.client.api.PulsarClient", "io.converge.outbox.spi.OutboxSink"})
@ConditionalOnProperty(prefix = "converge.producer", name = "mode", havingValue = "outbox")
@EnableConfigurationProperties(PulsarProperties.class)
class PulsarOutboxAutoConfiguration {

  /** The sink and the consumer binding, only when the outbox is told to publish to Pulsar. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(prefix = "converge.outbox", name = "sink", havingValue = "pulsar")
  @Import(PulsarAutoConfiguration.Consumers.class)
  static class Sink {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(OutboxSink.class)
    OutboxSink convergePulsarOutboxSink(PulsarProperties pulsar) {
      PulsarOutboxSink.Builder b = PulsarOutboxSink.serviceUrl(
          Objects.requireNonNull(pulsar.serviceUrl(),
              "converge.pulsar.service-url is required by converge.outbox.sink=pulsar"));
      if (pulsar.sendTimeout() != null) {
        b.sendTimeout(pulsar.sendTimeout());
      }
      return b.build();
    }
  }
}
