package io.converge.starter;

import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The starter's start-up check: before any bean is created, {@code converge.producer.mode} (and, in
 * {@code outbox} mode, {@code converge.outbox.sink}) is checked against the classpath by
 * {@link ProducerModeCheck}, so that a missing broker client fails the start with the artifact to add
 * instead of a missing {@code TransactionalPublisher} bean. The beans themselves come from the modules'
 * auto-configurations.
 */
@AutoConfiguration
class ConvergeStarterAutoConfiguration {

  ConvergeStarterAutoConfiguration() {
  }

  /** Static: a bean factory post-processor runs before the configuration's own instance exists. */
  @Bean
  static BeanFactoryPostProcessor convergeProducerModeCheck(Environment environment) {
    return beans -> ProducerModeCheck.check(environment, beans);
  }
}
