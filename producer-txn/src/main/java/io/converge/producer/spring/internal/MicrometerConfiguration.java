package io.converge.producer.spring.internal;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Configuration;

/**
 * The one convention of Converge's auto-configurations for metrics: a nested configuration (so that its bean
 * methods may name Micrometer types) that applies when Micrometer is on the class path and the application has a
 * {@code MeterRegistry} bean. Its beans count into that registry; each backs off ({@code @ConditionalOnMissingBean})
 * when the application defines its own. For Converge's modules, not for applications.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = MicrometerConfiguration.METER_REGISTRY)
@ConditionalOnBean(type = MicrometerConfiguration.METER_REGISTRY)
public @interface MicrometerConfiguration {

  /** Micrometer's registry type, named as text: Micrometer is optional. */
  String METER_REGISTRY = "io.micrometer.core.instrument.MeterRegistry";
}
