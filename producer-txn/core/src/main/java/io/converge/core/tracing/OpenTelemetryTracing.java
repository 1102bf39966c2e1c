package io.converge.core.tracing;

import io.converge.core.tracing.internal.OtelSpans;
import io.opentelemetry.api.OpenTelemetry;
import java.util.Objects;

/**
 * The {@link Tracing} of an OpenTelemetry instance: {@code TxnProducer.builder().tracing(OpenTelemetryTracing.of(sdk))}.
 * The one public type of Converge whose signature names OpenTelemetry; use it only with the API on the classpath.
 * Stateless; thread-safe.
 */
public final class OpenTelemetryTracing {

  private OpenTelemetryTracing() {
  }

  /** Traces with {@code openTelemetry} (your SDK, the agent's instance, or Spring Boot's {@code OpenTelemetry} bean). */
  public static Tracing of(OpenTelemetry openTelemetry) {
    return Tracing.with(OtelSpans.of(Objects.requireNonNull(openTelemetry, "openTelemetry")));
  }
}
