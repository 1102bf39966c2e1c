package io.converge.producer.spring;

import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.producer.spring.internal.ProducerModeAutoConfiguration;
import java.util.Objects;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Spring Boot auto-configuration of the RocketMQ {@link TxnProducer} when
 * {@code converge.producer.mode=rocketmq}: the RocketMQ {@link ProducerBackend} on
 * {@code converge.producer.name-server}, and through {@link ConvergeProducerConfiguration} a
 * {@code TxnProducer} and a {@link TransactionalPublisher} on the application's {@code DataSource}, each
 * replaceable by a bean of one's own.
 */
@ProducerModeAutoConfiguration("rocketmq")
@ConditionalOnClass(name = "org.apache.rocketmq.client.producer.TransactionMQProducer")
class ConvergeProducerAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  ProducerBackend convergeProducerBackend(ConvergeProducerProperties p) {
    return ProducerBackend.of(() -> RocketMQBackend.nameServer(
        Objects.requireNonNull(p.nameServer(), "converge.producer.name-server is required")), "producer");
  }
}
