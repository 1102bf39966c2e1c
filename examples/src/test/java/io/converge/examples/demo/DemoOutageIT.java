package io.converge.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.DevPlatform;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.examples.events.ServiceTracing;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The demo under outages (issue 19): in each backend's phase, while its order traffic runs, PostgreSQL
 * is frozen (SIGSTOP of the postmaster and its backends) for 4 s, more than three times the services'
 * pool timeout (shortened to 1.25 s here so that the test stays short), then the phase's broker is out for
 * 4 s (RocketMQ's broker stopped and started on its store; Pulsar's JVM frozen). 60 orders per
 * backend, spread through the outages (40, as in {@code DemoIT}, is the fewest that reach the
 * compensations). Afterwards nothing
 * may be parked or ticketed, no 5xx stored as an Idempotency-Key's answer, every request answered
 * after the clients' retries, and every invariant of the reconciliation must hold.
 *
 * <p>It is also the demo's run on each backend (what {@code DemoIT} proved without outages, in a run of its
 * own that cost about a minute of the suite): the five services, retried and concurrent HTTP requests, injected
 * duplicate deliveries and compensated orders, every reconciliation invariant, each asserted below as
 * {@code DemoIT} did. A run without outages plays the same traffic on the same code with the outages left out,
 * so it proves nothing the run with them does not.
 *
 * <p>Both flows of the saga (issue 32, item 8), split across the backends rather than run twice on each: rocketmq and
 * pulsar orchestrated (converge-saga's coordinator and participants on half messages and on Pulsar transactions, their
 * consumers on the RocketMQ and the Pulsar bindings), outbox choreographed. The orchestrated runs also reconcile the
 * sagas (every one ended as its order did, none left running, stopped or failed; the participants absorbed the
 * re-sent commands) and the answers of the clients that waited ({@code Prefer: wait}), and their debit is a TCC
 * branch (issue 33, item 4): one Confirm per paid order, every Try confirmed or cancelled, no frozen balance without
 * an order nor left at the end, and a Try that arrives after its Cancel (injected for two orders canceled for stock)
 * refused as hanging after an empty rollback.
 *
 * <p>Tracing end to end (issue 34, item 1): every service traces into one in-memory exporter (its own SDK, its name
 * as {@code service.name}), emptied after each backend; on each, a paid order's trace runs from the
 * {@code POST /orders} server span (annotated by the Idempotency-Key filter) through order, inventory, account and
 * notification by parent links alone, across the outages (see {@code assertOneTraceFromPostOrders}).
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class, PulsarExtension.class})
class DemoOutageIT {

  static final Outages OUTAGES = new Outages(Duration.ofSeconds(4), Duration.ofSeconds(4));

  @Test
  void everyBackendReconcilesAfterDatabaseAndBrokerOutages(EmbeddedRocketMQ mq, ConvergePostgres pg,
      EmbeddedPulsar pulsar)
      throws Exception {
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(text, true, StandardCharsets.UTF_8);
    DemoRunner runner = new DemoRunner(DevPlatform.of(mq, pg, pulsar), new Tee(out), OUTAGES,
        Outages.SHORT_POOL_TIMEOUT);
    // every service traces into one in-memory exporter (issue 34, item 1), emptied after each backend's check
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    runner.traceTo(spans);
    boolean ok = true;
    try {
      for (String backend : List.of("rocketmq:orchestration", "outbox:choreography", "pulsar:orchestration")) {
        ok &= runner.run(60, backend);
        assertOneTraceFromPostOrders(backend, spans.getFinishedSpanItems());
        spans.reset();
      }
    } finally {
      assertThat(pg.isFrozen()).as("the database is thawed after the run").isFalse();
      assertThat(pulsar.isFrozen()).as("Pulsar is thawed after the run").isFalse();
      assertThat(mq.isBrokerRunning()).as("the RocketMQ broker is up after the run").isTrue();
    }
    String printed = text.toString(StandardCharsets.UTF_8);
    assertThat(printed).contains("PostgreSQL frozen", "RocketMQ broker stopped", "Pulsar frozen");
    assertThat(runner.reports()).hasSize(3).allSatisfy(r -> {
      assertThat(r.parkedOrTickets()).as("dead letters and tickets, backend " + r.backend() + "\n" + printed).isZero();
      assertThat(r.stored5xx()).as("stored 5xx answers, backend " + r.backend() + "\n" + printed).isZero();
      assertThat(r.client().gaveUp()).as("requests without an answer, backend " + r.backend() + "\n" + printed)
          .isZero();
      assertThat(r.violations()).as(printed).isEmpty();
      assertThat(r.paid()).isPositive();
      assertThat(r.debitedCents()).isEqualTo(r.paidCents());
      // the demo's own proofs (were DemoIT's): compensations, duplicates absorbed, retries replayed
      assertThat(r.canceledForPayment()).isPositive();
      assertThat(r.compensations()).isEqualTo(r.canceledForPayment());
      assertThat(r.duplicatesAbsorbed()).isGreaterThanOrEqualTo(r.duplicatesInjected()).isPositive();
      assertThat(r.traffic().retriesReplayed()).isEqualTo(r.traffic().retries()).isPositive();
      // signed provider callbacks (issue 34.3): forged 401, stale 400, the copy answered with the first answer
      assertThat(r.callbacks()).extracting(c -> c.validApplied() && c.forged401() && c.stale400() && c.replayedFirst())
          .as(printed).isEqualTo(true);
    });
    assertThat(printed).contains("backend rocketmq", "backend outbox", "backend pulsar");
    assertThat(runner.flows()).containsExactly(Flow.ORCHESTRATION, Flow.CHOREOGRAPHY, Flow.ORCHESTRATION);
    for (int i = 0; i < runner.reports().size(); i++) {
      Report r = runner.reports().get(i);
      if (runner.flows().get(i) == Flow.ORCHESTRATION) {
        // the debit is a TCC branch (issue 33, item 4): each paid order's amount frozen by a Try, debited by its
        // Confirm; the reconciliation's "frozen balances with no order = 0" and "at the end = 0" held (violations)
        assertThat(r.tcc().confirmed()).as("TCC Confirms, backend " + r.backend() + "\n" + printed)
            .isEqualTo(r.paid()).isPositive();
        assertThat(r.tcc().tried()).as("TCC Tries").isEqualTo(r.tcc().confirmed() + r.tcc().cancelled());
        // the late Tries (LateTries: the debit's Cancel, then its Try, of orders canceled for stock)
        assertThat(r.tcc().hangingRefused()).as("late Tries refused as hanging").isPositive()
            .isLessThanOrEqualTo(r.tcc().emptyRollbacks());
      } else {
        assertThat(r.tcc().tried()).as("the choreographed debit freezes nothing").isZero();
      }
    }
    assertThat(runner.reports()).as("clients waited for the outcome (Prefer: wait) on every backend")
        .allSatisfy(r -> assertThat(r.traffic().waited()).isNotEmpty());
    assertThat(runner.reports()).as("the clients felt the outages: they retried")
        .anySatisfy(r -> assertThat(r.client().retries()).isPositive());
    assertThat(ok).as(printed).isTrue();
  }

  /**
   * One trace from the request to the last service (issue 34, item 1): a paid order's trace (one that reached the
   * notification service) has the order service's {@code POST /orders} SERVER span as its root and, each reached from
   * it by parent links alone (the examples' consumers trace as children: {@code traceAsParent}), a process span in
   * inventory, account and notification and a publish (or, on the outbox, create) span in order, inventory and
   * account: the saga's commands and replies (orchestrated) or the events (choreographed) carried the context across
   * every service.
   */
  private static void assertOneTraceFromPostOrders(String backend, List<SpanData> spans) {
    Map<String, List<SpanData>> traces = spans.stream().collect(Collectors.groupingBy(SpanData::getTraceId));
    List<SpanData> posts = spans.stream()
        .filter(s -> s.getKind() == SpanKind.SERVER && in(s, "order")
            && "POST".equals(s.getAttributes().get(AttributeKey.stringKey("http.request.method")))
            && "/orders".equals(s.getAttributes().get(AttributeKey.stringKey("url.path"))))
        .toList();
    assertThat(posts).as("POST /orders server spans, backend " + backend).isNotEmpty();
    List<SpanData> trace = posts.stream().map(p -> traces.get(p.getTraceId()))
        .filter(t -> t.stream().anyMatch(s -> s.getKind() == SpanKind.CONSUMER && in(s, "notification")))
        .findFirst().orElseThrow(() -> new AssertionError("no trace of a POST /orders reached the notification service,"
            + " backend " + backend + ": " + traces.size() + " traces, services "
            + spans.stream().map(s -> service(s) + ":" + s.getName()).distinct().sorted().toList()));
    Map<String, SpanData> byId = trace.stream().collect(Collectors.toMap(SpanData::getSpanId, s -> s, (a, b) -> a));
    SpanData root = posts.stream().filter(p -> p.getTraceId().equals(trace.get(0).getTraceId())).findFirst()
        .orElseThrow();
    assertThat(root.getParentSpanContext().isValid()).as("POST /orders is the trace's root").isFalse();
    assertThat(root.getName()).as("the server span's name, {method} {route}").isEqualTo("POST /orders");
    // the Idempotency-Key filter annotated the server span it ran in (the outcome is first-run, or under an outage
    // the problem answered when the commit's answer was lost, e.g. outcome-unknown)
    assertThat(root.getAttributes().get(AttributeKey.stringKey("converge.idempotency.key"))).as("the order's key")
        .isNotBlank();
    assertThat(root.getAttributes().get(AttributeKey.stringKey("converge.idempotency.outcome")))
        .as("the key's outcome on the server span").isNotBlank();
    for (String service : List.of("inventory", "account", "notification")) {
      assertThat(trace).as("a process span in " + service + ", backend " + backend)
          .anySatisfy(s -> {
            assertThat(s.getKind()).isEqualTo(SpanKind.CONSUMER);
            assertThat(s.getName()).startsWith("process ");
            assertThat(service(s)).isEqualTo(service);
          });
    }
    for (String service : List.of("order", "inventory", "account")) {
      assertThat(trace).as("a publish span in " + service + ", backend " + backend)
          .anySatisfy(s -> {
            assertThat(s.getKind()).isEqualTo(SpanKind.PRODUCER);
            assertThat(s.getName()).matches("(publish|create) .+");
            assertThat(service(s)).isEqualTo(service);
          });
    }
    for (SpanData s : trace) {
      if (!in(s, "order") && !in(s, "inventory") && !in(s, "account") && !in(s, "notification")) {
        continue;
      }
      SpanData at = s;
      for (int hops = 0; at != root; hops++) {
        assertThat(hops).as("span chain too long, backend " + backend).isLessThan(1000);
        SpanData up = byId.get(at.getParentSpanId());
        assertThat(up)
            .as("the parent of " + service(at) + " " + at.getName() + " in the trace of POST /orders, backend "
                + backend)
            .isNotNull();
        at = up;
      }
    }
  }

  private static String service(SpanData s) {
    return s.getResource().getAttribute(ServiceTracing.SERVICE_NAME);
  }

  private static boolean in(SpanData s, String service) {
    return service.equals(service(s));
  }

  /** Prints to the test's log too, so that a long run shows its progress. */
  private static final class Tee extends PrintStream {

    Tee(PrintStream copy) {
      super(new java.io.OutputStream() {

        @Override
        public void write(int b) {
          copy.write(b);
          System.out.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
          copy.write(b, off, len);
          System.out.write(b, off, len);
        }
      }, true, StandardCharsets.UTF_8);
    }
  }
}
