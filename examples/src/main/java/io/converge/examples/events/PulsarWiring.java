package io.converge.examples.events;

import io.converge.producer.TxnProducer;
import io.converge.producer.TxnProducerBuilder;
import io.converge.producer.schema.Migrations;
import io.converge.producer.spring.TransactionalPublisher;
import io.converge.consumer.spi.ConsumerBinding;
import io.converge.pulsar.PulsarBackend;
import io.converge.pulsar.PulsarIdempotentConsumer;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The services on Pulsar ({@code converge.producer.mode=pulsar}): the Pulsar {@code TxnProducer} with
 * the topics of {@code converge.producer.topics}, its {@link TransactionalPublisher}, and the Pulsar
 * binding under {@code @IdempotentConsumer}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "converge.producer", name = "mode", havingValue = "pulsar")
class PulsarWiring {

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  TxnProducer convergeTxnProducer(DataSource dataSource, MeterRegistry registry,
                                  @Value("${converge.producer.group}") String group,
                                  @Value("${converge.producer.topics:}") List<String> topics,
                                  @Value("${converge.pulsar.service-url}") String serviceUrl) {
    Migrations.apply(dataSource, "producer");
    Migrations.apply(dataSource, "pulsar");
    TxnProducerBuilder b = TxnProducer.builder().group(group).dataSource(dataSource)
        .backend(PulsarBackend.serviceUrl(serviceUrl).meterRegistry(registry));
    if (!topics.isEmpty()) {
      b.topics(topics.toArray(String[]::new));
    }
    return b.build();
  }

  /** The transport of every {@code @IdempotentConsumer} method: a Key_Shared Pulsar subscription per group. */
  @Bean
  @ConditionalOnMissingBean
  ConsumerBinding convergePulsarConsumers(@Value("${converge.pulsar.service-url}") String serviceUrl) {
    return PulsarIdempotentConsumer.binding(() -> PulsarIdempotentConsumer.builder().serviceUrl(serviceUrl));
  }

  @Bean
  @ConditionalOnMissingBean
  TransactionalPublisher convergeTransactionalPublisher(TxnProducer producer, DataSource dataSource) {
    return new TransactionalPublisher(producer, dataSource);
  }
}
