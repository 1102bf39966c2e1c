package io.converge.consumer.spring;

import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.ConsumerOps;
import io.converge.consumer.http.CallbackMetrics;
import io.converge.consumer.http.IdempotencyMetrics;
import io.converge.consumer.micrometer.MicrometerCallbackMetrics;
import io.converge.consumer.micrometer.MicrometerConsumerMetrics;
import io.converge.consumer.micrometer.MicrometerIdempotencyMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.springframework.context.ApplicationContext;

/** Loaded only when Micrometer is on the class path. */
final class MicrometerBridge {

  private MicrometerBridge() {
  }

  static ConsumerMetrics metrics(ApplicationContext context, ConsumerOps ops) {
    MeterRegistry registry = context.getBeanProvider(MeterRegistry.class).getIfUnique();
    return registry == null ? ConsumerMetrics.NONE : MicrometerConsumerMetrics.of(registry, ops, Clock.systemUTC());
  }

  static IdempotencyMetrics idempotencyMetrics(ApplicationContext context) {
    MeterRegistry registry = context.getBeanProvider(MeterRegistry.class).getIfUnique();
    return registry == null ? IdempotencyMetrics.NONE : MicrometerIdempotencyMetrics.of(registry);
  }

  static CallbackMetrics callbackMetrics(ApplicationContext context) {
    MeterRegistry registry = context.getBeanProvider(MeterRegistry.class).getIfUnique();
    return registry == null ? CallbackMetrics.NONE : MicrometerCallbackMetrics.of(registry);
  }
}
