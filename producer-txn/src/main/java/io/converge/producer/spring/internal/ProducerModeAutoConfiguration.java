package io.converge.producer.spring.internal;

import io.converge.producer.spring.ConvergeProducerConfiguration;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.AliasFor;

/**
 * The one shape of a producer mode's auto-configuration ({@code rocketmq}, {@code pulsar}, {@code outbox}): it applies
 * when {@code converge.producer.mode} is {@link #value()}, after the application's {@code DataSource} and meter
 * registry (Spring Boot 3 and 4 names), and imports {@link ConvergeProducerConfiguration}, which builds the producer
 * from the mode's {@code ProducerBackend} bean and {@code converge.producer.*}. For Converge's modules, not for
 * applications.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@AutoConfiguration(afterName = {
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnProperty(prefix = "converge.producer", name = "mode")
@Import(ConvergeProducerConfiguration.class)
public @interface ProducerModeAutoConfiguration {

  /** The value of {@code converge.producer.mode} that selects this mode. */
  @AliasFor(annotation = ConditionalOnProperty.class, attribute = "havingValue")
  String value();
}
