package io.converge.console.stuck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.console.inspect.Inspector;
import io.converge.console.inspect.StuckKind;
import io.converge.console.inspect.StuckThresholds;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MoneyAnomalyException;
import io.converge.consumer.Outcome;
import io.converge.core.Envelope;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A real stuck item on the embedded PostgreSQL (a money anomaly the idempotent handler dead-lettered and
 * ticketed) past a tiny threshold shows in the {@code converge.stuck} gauges of two {@link StuckGauges}
 * instances sharing the database, and a real local HTTP server receives exactly one successful POST per
 * stuck item: the first POST of the ticket is answered 500 and retried with backoff, and neither the second
 * instance nor a restarted one posts again.
 */
class StuckGaugesIT {

  private WebhookBed bed;
  private final List<String> bodies = new CopyOnWriteArrayList<>();
  private final AtomicInteger failTickets = new AtomicInteger(1);

  @BeforeEach
  void setUp() throws Exception {
    bed = new WebhookBed("stuck").on("/alerts", exchange -> {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      boolean fail = body.contains("\"kind\":\"ticket\"") && failTickets.getAndDecrement() > 0;
      bodies.add((fail ? "500 " : "200 ") + body);
      exchange.sendResponseHeaders(fail ? 500 : 200, -1);
      exchange.close();
    });
  }

  @AfterEach
  void tearDown() {
    bed.close();
  }

  @Test
  void aStuckDeadLetterShowsInTheGaugesAndIsPostedOnceAcrossInstancesAndRestarts() throws Exception {
    IdempotentHandler h = IdempotentHandler.builder().group("ledger").dataSource(bed.ds).handler((c, m) -> {
      throw new MoneyAnomalyException("amount differs from the order", "10.00", "100.00");
    }).build();
    assertThat(h.handle(IncomingMessage.builder().topic("payments").header(Envelope.MESSAGE_ID, "m-anomaly")
        .payload("{}").build())).isEqualTo(Outcome.TICKETED);

    StuckThresholds tiny = StuckThresholds.defaults().withAll(Duration.ofMillis(1));
    MeterRegistry first = new SimpleMeterRegistry();
    MeterRegistry second = new SimpleMeterRegistry();
    try (StuckGauges a = gauges(first, tiny).start(); StuckGauges b = gauges(second, tiny).start()) {
      for (MeterRegistry registry : List.of(first, second)) {
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
          assertThat(gauge(registry, StuckKind.CONSUMER_DLQ)).isEqualTo(1.0);
          assertThat(gauge(registry, StuckKind.TICKET)).isEqualTo(1.0);
          assertThat(gauge(registry, StuckKind.OUTBOX_PARKED)).isZero();
        });
      }
      await().atMost(Duration.ofSeconds(10))
          .until(() -> bodies.stream().filter(s -> s.startsWith("200 ")).count() == 2);
      long seenA = a.refreshes();
      long seenB = b.refreshes();
      // a full refresh of each instance after both POSTs succeeded: neither posts again
      await().atMost(Duration.ofSeconds(10)).until(() -> a.refreshes() > seenA && b.refreshes() > seenB);
    }
    try (StuckGauges restarted = gauges(new SimpleMeterRegistry(), tiny).start()) {
      await().atMost(Duration.ofSeconds(10)).until(() -> restarted.refreshes() >= 1);
      assertThat(restarted.count(StuckKind.CONSUMER_DLQ)).isOne();
    }
    assertThat(bodies).as("one 500 then one 200 for the ticket, one 200 for the dead letter").hasSize(3);
    assertThat(bodies).filteredOn(s -> s.startsWith("500 ")).singleElement().asString()
        .contains("\"kind\":\"ticket\"");
    assertThat(bodies).filteredOn(s -> s.startsWith("200 ")).satisfiesExactlyInAnyOrder(
        s -> assertThat(s).contains("\"kind\":\"consumer-dlq\"").contains("MONEY_ANOMALY"),
        s -> assertThat(s).contains("\"kind\":\"ticket\""));
    assertThat(bodies.stream().filter(s -> s.contains("\"kind\":\"consumer-dlq\"")).count()).isOne();
    assertThat(first.find(StuckGauges.METER).gauges()).as("closed: gauges removed").isEmpty();
  }

  private StuckGauges gauges(MeterRegistry registry, StuckThresholds thresholds) {
    StuckWebhook webhook = bed.webhook("/alerts").timeout(Duration.ofSeconds(2))
        .retry(Duration.ofMillis(50), Duration.ofMillis(200)).build();
    return StuckGauges.builder().inspector(Inspector.of(bed.ds, thresholds)).registry(registry)
        .refreshInterval(Duration.ofMillis(50)).webhook(webhook).build();
  }

  private static double gauge(MeterRegistry registry, StuckKind kind) {
    return registry.get(StuckGauges.METER).tag("kind", kind.slug()).gauge().value();
  }
}
