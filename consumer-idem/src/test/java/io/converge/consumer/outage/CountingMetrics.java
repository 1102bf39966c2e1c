package io.converge.consumer.outage;

import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.FailureKind;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the failures the handler saw, by kind. */
public final class CountingMetrics implements ConsumerMetrics {

  private final Map<FailureKind, AtomicInteger> failures = new ConcurrentHashMap<>();

  @Override
  public void failure(String group, String topic, FailureKind kind) {
    failures.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
  }

  @Override
  public void outcome(String group, String topic, io.converge.consumer.Outcome outcome) {
  }

  /** Failures of {@code kind} so far. */
  public int failures(FailureKind kind) {
    AtomicInteger n = failures.get(kind);
    return n == null ? 0 : n.get();
  }

  /** Failures of any kind so far. */
  public int failures() {
    return failures.values().stream().mapToInt(AtomicInteger::get).sum();
  }
}
