package io.converge.examples.events;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.nio.file.Path;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * The services' traces (issue 34, item 1). Nothing is exported by default: without {@code examples.tracing.file} the
 * services have no {@code OpenTelemetry} bean and Converge traces with {@code GlobalOpenTelemetry} (the OpenTelemetry
 * Java agent's, e.g. to an OTLP endpoint, or none). With {@code examples.tracing.file=<path>} each service has its own
 * SDK (resource {@code service.name} = the service's name) that appends one JSON line per span to that file
 * ({@link JsonLinesSpanExporter}); a {@code SpanExporter} bean of the application (the demo's test registers an
 * in-memory one) is used instead of the file. Converge's auto-configuration builds its {@code Tracing} of that SDK.
 *
 * <p>Every request to a service with an SDK gets an HTTP SERVER span ({@link ServerSpanFilter}; the examples carry no
 * HTTP instrumentation), so that a trace starts at {@code POST /orders} and the Idempotency-Key filter annotates it.
 */
@Configuration(proxyBeanMethods = false)
public class ServiceTracing {

  /** The property naming the file the spans are appended to. */
  public static final String FILE_PROPERTY = "examples.tracing.file";

  /** The resource attribute naming the service. */
  public static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");

  /** One SDK per service, spans exported synchronously at their end, closed with the service. */
  @Bean(destroyMethod = "close")
  @Conditional(ExportConfigured.class)
  @ConditionalOnMissingBean(OpenTelemetry.class)
  OpenTelemetrySdk openTelemetry(ObjectProvider<SpanExporter> exporter, @Value("${" + FILE_PROPERTY + ":}") String file,
      @Value("${examples.service-name:${spring.config.name:${spring.application.name:service}}}") String service) {
    SpanExporter to = exporter.getIfAvailable(() -> new JsonLinesSpanExporter(Path.of(file)));
    SdkTracerProvider tracerProvider = SdkTracerProvider.builder()
        .setResource(Resource.getDefault().merge(Resource.create(Attributes.of(SERVICE_NAME, service))))
        .addSpanProcessor(SimpleSpanProcessor.create(to)).build();
    return OpenTelemetrySdk.builder().setTracerProvider(tracerProvider).build();
  }

  /** The server spans, outside every other filter (the Idempotency-Key filter's order is 0). */
  @Bean
  FilterRegistrationBean<ServerSpanFilter> serverSpans(ObjectProvider<OpenTelemetry> openTelemetry) {
    OpenTelemetry otel = openTelemetry.getIfUnique();
    FilterRegistrationBean<ServerSpanFilter> registration = new FilterRegistrationBean<>(new ServerSpanFilter(otel));
    registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 10);
    registration.setEnabled(otel != null);
    return registration;
  }

  /** True when {@code examples.tracing.file} is set or the application has a {@code SpanExporter} bean. */
  static final class ExportConfigured implements Condition {

    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
      String file = context.getEnvironment().getProperty(FILE_PROPERTY);
      return (file != null && !file.isBlank())
          || context.getBeanFactory().getBeanNamesForType(SpanExporter.class, true, false).length > 0;
    }
  }
}
