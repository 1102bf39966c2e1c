package io.converge.ops.doctor;

import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The stuck-items check of {@code converge doctor} (rows of Converge's tables waiting longer than a threshold: parked
 * outbox keys, open tickets, parked Pulsar transactions). A seam: the counting belongs to
 * {@code io.converge.console.inspect.Inspector} (module {@code ops/console}), which this check calls once that module
 * is on this module's classpath; until then {@link #NOT_WIRED} reports nothing.
 */
interface StuckItems {

  /** Reports nothing: the Inspector of {@code ops/console} is not wired in yet. */
  StuckItems NOT_WIRED = (dataSource, out) -> {
  };

  /** Counts the stuck items in {@code dataSource} and reports a finding per kind to {@code out}. */
  void check(DataSource dataSource, Consumer<Finding> out);
}
