package io.converge.consumer.micrometer;

import io.converge.consumer.http.CallbackMetrics;
import io.converge.consumer.http.CallbackProblem;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * Signed-callback metrics on Micrometer, counters tagged {@code endpoint} ({@code METHOD pattern}):
 * {@code callback.verified}, {@code callback.replayed} (a copy answered with the first answer) and
 * {@code callback.refused} (also tagged {@code reason}: signature-missing, signature-malformed,
 * timestamp-out-of-tolerance, signature-mismatch, body-too-large, secrets-unavailable). Thread-safe. Needs
 * {@code io.micrometer:micrometer-core}.
 */
public final class MicrometerCallbackMetrics implements CallbackMetrics {

  private final MeterRegistry registry;

  private MicrometerCallbackMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Counters on {@code registry}. */
  public static MicrometerCallbackMetrics of(MeterRegistry registry) {
    return new MicrometerCallbackMetrics(Objects.requireNonNull(registry, "registry"));
  }

  @Override
  public void verified(String endpoint) {
    Counter.builder("callback.verified").tag("endpoint", endpoint).register(registry).increment();
  }

  @Override
  public void refused(String endpoint, CallbackProblem problem) {
    Counter.builder("callback.refused").tag("endpoint", endpoint).tag("reason", problem.code()).register(registry)
        .increment();
  }

  @Override
  public void replayed(String endpoint) {
    Counter.builder("callback.replayed").tag("endpoint", endpoint).register(registry).increment();
  }
}
