package io.converge.producer.micrometer;

import io.converge.producer.spi.ProducerMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Producer metrics in a Micrometer registry (needs {@code io.micrometer:micrometer-core}), tagged with
 * the producer group: {@code txn.checkbacks} (tag {@code answer}), {@code txn.checkbacks.past-retention}, {@code txn.ends.dropped},
 * {@code txn.end-records.lost}, {@code txn.pending} (messages
 * published whose transaction has not ended) and {@code txn.send.latency}. Thread-safe.
 */
public final class MicrometerProducerMetrics implements ProducerMetrics {

  private final Counter commit;
  private final Counter rollback;
  private final Counter unknown;
  private final Counter pastRetention;
  private final Counter endsDropped;
  private final Counter endRecordsLost;
  private final AtomicInteger pending = new AtomicInteger();
  private final Timer send;

  /** Metrics of producer group {@code group} in {@code registry}. */
  public MicrometerProducerMetrics(MeterRegistry registry, String group) {
    this.commit = checkbacks(registry, group, "COMMIT");
    this.rollback = checkbacks(registry, group, "ROLLBACK");
    this.unknown = checkbacks(registry, group, "UNKNOWN");
    this.pastRetention = Counter.builder("txn.checkbacks.past-retention")
        .description(
            "check-backs for a message older than the log retention without a row: answered UNKNOWN, ticket raised")
        .tag("group", group).register(registry);
    this.endsDropped = Counter.builder("txn.ends.dropped")
        .description("ENDs dropped because the broker was too slow; the check-back resolves their messages")
        .tag("group", group).register(registry);
    this.endRecordsLost = Counter.builder("txn.end-records.lost")
        .description("records of converge_txn_end lost (recorder full or closed, write failed); messages unaffected")
        .tag("group", group).register(registry);
    registry.gauge("txn.pending", java.util.List.of(io.micrometer.core.instrument.Tag.of("group", group)), pending);
    this.send = Timer.builder("txn.send.latency").description("time of one send to the broker").tag("group", group)
        .register(registry);
  }

  private static Counter checkbacks(MeterRegistry registry, String group, String answer) {
    return Counter.builder("txn.checkbacks").description("check-backs answered from the transaction log")
        .tag("group", group).tag("answer", answer).register(registry);
  }

  @Override
  public void checkBack(String answer) {
    switch (answer) {
      case "COMMIT" -> commit.increment();
      case "ROLLBACK" -> rollback.increment();
      default -> unknown.increment();
    }
  }

  @Override
  public void checkBackPastRetention() {
    pastRetention.increment();
  }

  @Override
  public void endDropped() {
    endsDropped.increment();
  }

  @Override
  public void endRecordLost() {
    endRecordsLost.increment();
  }

  @Override
  public void pending(int delta) {
    pending.addAndGet(delta);
  }

  @Override
  public void sent(Duration latency) {
    send.record(latency);
  }
}
