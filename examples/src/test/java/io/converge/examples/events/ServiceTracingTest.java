package io.converge.examples.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.env.MapPropertySource;

/** The services' traces: none by default; a service's own SDK, named, over a file or an exporter bean when configured. */
class ServiceTracingTest {

  @Test
  void nothingIsTracedOrExportedByDefault() {
    try (AnnotationConfigApplicationContext ctx = context(Map.of(), null)) {
      assertThat(ctx.getBeanNamesForType(OpenTelemetry.class)).isEmpty();
      assertThat(ctx.getBean(FilterRegistrationBean.class).isEnabled()).as("no server spans").isFalse();
    }
  }

  @Test
  void anExporterBeanGetsTheServicesSpansUnderItsName() {
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    try (AnnotationConfigApplicationContext ctx = context(Map.of("spring.config.name", "inventory"), spans)) {
      ctx.getBean(OpenTelemetry.class).getTracer("t").spanBuilder("process x").startSpan().end();
      assertThat(ctx.getBean(FilterRegistrationBean.class).isEnabled()).as("server spans").isTrue();
      // read before the close: closing the service's SDK shuts its exporter down (the demo shares one, see SagaServices)
      assertThat(spans.getFinishedSpanItems()).singleElement().satisfies(
          s -> assertThat(s.getResource().getAttribute(ServiceTracing.SERVICE_NAME)).isEqualTo("inventory"));
    }
  }

  @Test
  void theFilePropertyAppendsJsonLines(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("spans.jsonl");
    try (AnnotationConfigApplicationContext ctx = context(
        Map.of(ServiceTracing.FILE_PROPERTY, file.toString(), "spring.config.name", "order"), null)) {
      ctx.getBean(OpenTelemetry.class).getTracer("t").spanBuilder("POST /orders").startSpan().end();
    }
    assertThat(Files.readAllLines(file)).singleElement().asString().startsWith("{\"service\":\"order\",")
        .contains("\"name\":\"POST /orders\"");
  }

  private static AnnotationConfigApplicationContext context(Map<String, Object> properties, SpanExporter spans) {
    AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext();
    ctx.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", properties));
    if (spans != null) {
      ctx.getBeanFactory().registerSingleton("spans", spans);
    }
    ctx.register(ServiceTracing.class);
    ctx.refresh();
    return ctx;
  }
}
