package io.converge.pulsar.internal;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/** The gauges of the Pulsar backend; loaded only when a registry is given (Micrometer is optional). */
final class PulsarMeters {

  private PulsarMeters() {
  }

  static void register(Object registry, String group, PulsarRecovery recovery) {
    MeterRegistry r = (MeterRegistry) registry;
    Gauge.builder("txn.pulsar.open", recovery, PulsarRecovery::open)
        .description("Pulsar transactions logged with their DB commit and not confirmed yet")
        .tag("group", group).register(r);
    Gauge.builder("txn.pulsar.oldest.age", recovery, PulsarRecovery::oldestAgeSeconds)
        .description("Seconds since the oldest unconfirmed Pulsar transaction was logged")
        .baseUnit("seconds").tag("group", group).register(r);
    Gauge.builder("txn.pulsar.parked", recovery, PulsarRecovery::parked)
        .description("Pulsar transactions recovery parked: Pulsar refused their re-publish the maximum attempts")
        .tag("group", group).register(r);
  }
}
