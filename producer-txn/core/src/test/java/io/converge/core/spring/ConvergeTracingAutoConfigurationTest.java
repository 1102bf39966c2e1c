package io.converge.core.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.tracing.Tracing;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The {@code Tracing} bean the Converge auto-configurations build with: the application's OpenTelemetry bean's. */
class ConvergeTracingAutoConfigurationTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(ConvergeTracingAutoConfiguration.class));

  @Test
  void theApplicationsOpenTelemetryBeanIsTracedWith() {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
        .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build();
    runner.withBean(OpenTelemetry.class, () -> sdk).run(context -> {
      Map<String, String> headers = new HashMap<>();
      context.getBean(Tracing.class).publish("rocketmq", "publish", "orders", "m-1", headers::put).close();
      assertThat(exporter.getFinishedSpanItems()).extracting(s -> s.getName()).containsExactly("publish orders");
      assertThat(headers).containsKey("traceparent");
    });
    sdk.close();
  }

  @Test
  void withoutOneTheGlobalInstanceAndAnApplicationsOwnBeanWins() {
    runner.run(context -> assertThat(context.getBean(Tracing.class).enabled()).isTrue());
    runner.withBean(Tracing.class, Tracing::none)
        .run(context -> assertThat(context.getBean(Tracing.class)).isSameAs(Tracing.none()));
  }
}
