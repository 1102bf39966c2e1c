package io.converge.pulsar.micrometer;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.ToDoubleFunction;

/**
 * The gauges of the Pulsar backend: {@code txn.pulsar.open}, {@code txn.pulsar.oldest.age} and
 * {@code txn.pulsar.parked}, tagged {@code group}. Loaded only when a registry is given (Micrometer is
 * optional): callers pass the registry as {@code Object} so that this class is the only one that names it.
 * For Converge's modules only; not an API.
 */
public final class PulsarMeters {

  private PulsarMeters() {
  }

  /**
   * Registers the three gauges, read from {@code source} (held weakly, as Micrometer does).
   *
   * @param registry a {@code io.micrometer.core.instrument.MeterRegistry}
   * @param group the producer group (tag {@code group})
   * @param source what the gauges read: the backend's recovery
   * @param open transactions logged and not confirmed yet
   * @param oldestAgeSeconds seconds since the oldest of them was logged
   * @param parked transactions recovery parked
   */
  public static <T> void register(Object registry, String group, T source, ToDoubleFunction<T> open,
      ToDoubleFunction<T> oldestAgeSeconds, ToDoubleFunction<T> parked) {
    MeterRegistry r = (MeterRegistry) registry;
    Gauge.builder("txn.pulsar.open", source, open)
        .description("Pulsar transactions logged with their DB commit and not confirmed yet")
        .tag("group", group).register(r);
    Gauge.builder("txn.pulsar.oldest.age", source, oldestAgeSeconds)
        .description("Seconds since the oldest unconfirmed Pulsar transaction was logged")
        .baseUnit("seconds").tag("group", group).register(r);
    Gauge.builder("txn.pulsar.parked", source, parked)
        .description("Pulsar transactions recovery parked: Pulsar refused their re-publish the maximum attempts")
        .tag("group", group).register(r);
  }
}
