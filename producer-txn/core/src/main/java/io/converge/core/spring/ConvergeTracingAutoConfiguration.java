package io.converge.core.spring;

import io.converge.core.tracing.OpenTelemetryTracing;
import io.converge.core.tracing.Tracing;
import io.opentelemetry.api.OpenTelemetry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@link Tracing} bean every Converge auto-configuration builds with, when the OpenTelemetry API is on the
 * classpath: the application's {@code OpenTelemetry} bean (e.g. Spring Boot's, which is not the global instance)
 * when there is exactly one, else {@link Tracing#global()}. An application's own {@code Tracing} bean wins (e.g.
 * {@link Tracing#none()}). Without the API there is no bean and the modules use {@link Tracing#global()}, which is
 * then {@link Tracing#none()}.
 */
@AutoConfiguration
@ConditionalOnClass(name = "io.opentelemetry.api.OpenTelemetry")
class ConvergeTracingAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(Tracing.class)
  Tracing convergeTracing(ObjectProvider<OpenTelemetry> openTelemetry) {
    OpenTelemetry instance = openTelemetry.getIfUnique();
    return instance != null ? OpenTelemetryTracing.of(instance) : Tracing.global();
  }
}
