package io.converge.consumer.micrometer;

import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.ConsumerOps;
import io.converge.consumer.FailureKind;
import io.converge.consumer.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Consumer metrics on Micrometer: {@code consumer.duplicates}, {@code consumer.processed},
 * {@code consumer.business.failures}, {@code consumer.dead.lettered}, {@code consumer.tickets}
 * (counters tagged {@code group}, {@code topic}), {@code consumer.failures} (tagged {@code kind}),
 * {@code consumer.parked} (messages parked unrun for their envelope, tagged {@code reason}: {@code SIGNATURE_INVALID},
 * {@code REPLAYED}, {@code SCHEMA_UNSUPPORTED}) and
 * the gauge {@code dlq.size} (parked messages, read from the database at most every 10 s).
 * Thread-safe. Needs {@code io.micrometer:micrometer-core}.
 */
public final class MicrometerConsumerMetrics implements ConsumerMetrics {

  private static final Duration GAUGE_REFRESH = Duration.ofSeconds(10);

  private final MeterRegistry registry;

  private MicrometerConsumerMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Counters on {@code registry}; no {@code dlq.size} gauge. */
  public static MicrometerConsumerMetrics of(MeterRegistry registry) {
    return new MicrometerConsumerMetrics(Objects.requireNonNull(registry, "registry"));
  }

  /** Counters on {@code registry} and the {@code dlq.size} gauge read through {@code ops}. */
  public static MicrometerConsumerMetrics of(MeterRegistry registry, ConsumerOps ops, Clock clock) {
    MicrometerConsumerMetrics metrics = of(registry);
    CachedCount cached = new CachedCount(ops, clock);
    Gauge.builder("dlq.size", cached, CachedCount::value)
        .description("Messages parked in converge_dlq, waiting for a person").register(registry);
    return metrics;
  }

  @Override
  public void outcome(String group, String topic, Outcome outcome) {
    String name = switch (outcome) {
      case PROCESSED -> "consumer.processed";
      case DUPLICATE -> "consumer.duplicates";
      case BUSINESS_FAILURE -> "consumer.business.failures";
      case DEAD_LETTERED -> "consumer.dead.lettered";
      case TICKETED -> "consumer.tickets";
      case HELD -> "consumer.held";
    };
    Counter.builder(name).tag("group", group).tag("topic", topic).register(registry).increment();
  }

  @Override
  public void failure(String group, String topic, FailureKind kind) {
    Counter.builder("consumer.failures").tag("group", group).tag("topic", topic).tag("kind", kind.name())
        .register(registry).increment();
  }

  @Override
  public void parked(String group, String topic, String reasonCode) {
    Counter.builder("consumer.parked").tag("group", group).tag("topic", topic).tag("reason", reasonCode)
        .register(registry).increment();
  }

  /** A count read at most every {@link #GAUGE_REFRESH}: a scrape must not hammer the database. */
  private static final class CachedCount {

    private final ConsumerOps ops;
    private final Clock clock;
    private final AtomicReference<double[]> last = new AtomicReference<>(new double[]{Double.NaN, Long.MIN_VALUE});

    CachedCount(ConsumerOps ops, Clock clock) {
      this.ops = ops;
      this.clock = clock;
    }

    double value() {
      double[] l = last.get();
      Instant now = clock.instant();
      if (now.toEpochMilli() - (long) l[1] >= GAUGE_REFRESH.toMillis()) {
        try {
          l = new double[]{ops.countParked(), now.toEpochMilli()};
          last.set(l);
        } catch (RuntimeException e) {
          return l[0]; // the last known value; the failure shows in the consumers' own errors
        }
      }
      return l[0];
    }
  }
}
