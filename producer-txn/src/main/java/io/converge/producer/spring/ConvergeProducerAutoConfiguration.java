package io.converge.producer.spring;

import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import java.util.Objects;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Spring Boot auto-configuration of the RocketMQ {@link TxnProducer} when
 * {@code converge.producer.mode=rocketmq}: the RocketMQ {@link ProducerBackend} on
 * {@code converge.producer.name-server}, and through {@link ConvergeProducerConfiguration} a
 * {@code TxnProducer} and a {@link TransactionalPublisher} on the application's {@code DataSource}, each
 * replaceable by a bean of one's own.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass(name = "org.apache.rocketmq.client.producer.TransactionMQProducer")
@ConditionalOnProperty(prefix = "converge.producer", name = "mode", havingValue = "rocketmq")
@Import(ConvergeProducerConfiguration.class)
class ConvergeProducerAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  ProducerBackend convergeProducerBackend(ConvergeProducerProperties p) {
    return ProducerBackend.of(() -> RocketMQBackend.nameServer(
        Objects.requireNonNull(p.nameServer(), "converge.producer.name-server is required")), "producer");
  }
}
