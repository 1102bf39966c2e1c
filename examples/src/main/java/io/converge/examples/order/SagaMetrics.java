package io.converge.examples.order;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The saga's figures, from the order service that starts and ends it: {@code saga.step_latency} (a timer,
 * tag {@code outcome}: from the order's creation to its end), {@code saga.compensation_rate} (a gauge: the
 * share of ended orders canceled because the payment was refused, each of which inventory compensated) and
 * {@code saga.stuck_count} (a gauge: orders still CREATED longer than {@code examples.saga.stuck-after},
 * default {@code PT30S}). The gauges query the order table when read. Thread-safe.
 */
@Component
public class SagaMetrics {

  private static final String STUCK = "SELECT count(*) FROM orders WHERE state = 'CREATED' AND created_at < ?";
  private static final String ENDED = """
      SELECT count(*) FILTER (WHERE state = 'CANCELED' AND cancel_reason LIKE 'payment:%'),
             count(*) FILTER (WHERE state <> 'CREATED')
      FROM orders""";

  private final MeterRegistry registry;
  private final Clock clock;

  SagaMetrics(MeterRegistry registry, JdbcTemplate jdbc, Clock clock,
      @Value("${examples.saga.stuck-after:PT30S}") Duration stuckAfter) {
    this.registry = registry;
    this.clock = clock;
    Gauge.builder("saga.stuck_count", () -> jdbc.queryForObject(STUCK, Long.class,
        Timestamp.from(clock.instant().minus(stuckAfter))))
        .description("orders CREATED for longer than " + stuckAfter).register(registry);
    Gauge.builder("saga.compensation_rate", () -> jdbc.query(ENDED, rs -> {
      rs.next();
      long ended = rs.getLong(2);
      return ended == 0 ? 0.0 : (double) rs.getLong(1) / ended;
    })).description("share of ended orders compensated after a refused payment").register(registry);
  }

  /** Records the end of {@code order} in {@code outcome}: its step latency. */
  void ended(PurchaseOrder order, OrderState outcome) {
    ended(order.getCreatedAt(), outcome);
  }

  /** Records the end in {@code outcome} of an order created at {@code createdAt}: its step latency. */
  void ended(java.time.Instant createdAt, OrderState outcome) {
    Timer.builder("saga.step_latency").tag("outcome", outcome.name().toLowerCase(java.util.Locale.ROOT))
        .register(registry).record(Duration.between(createdAt, clock.instant()));
  }
}
