package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.core.Envelope;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import io.converge.saga.tcc.TccHeaders;
import io.converge.saga.tcc.TccOperation;
import io.converge.core.tracing.OpenTelemetryTracing;
import io.converge.core.tracing.Tracing;
import io.converge.saga.tcc.http.TccHttpWork;
import io.converge.saga.tcc.http.TccServlet;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.apache.catalina.startup.Tomcat;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * TCC global transactions driven by the saga coordinator on a real PostgreSQL through the outbox backend: message
 * branches delivered by the test ({@link Mailbox}: held, repeated, as a broker may), HTTP branches against a real
 * HTTP server of the JDK; time moved by hand ({@link MutableClock}). The participants are the test's own
 * ({@link TccTestParticipant}), following the protocol of the README.
 */
class TccCoordinatorIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final RetryPolicy RETRY = new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(20));

  private static DataSource ds;

  private final MutableClock clock = new MutableClock();
  private final List<AutoCloseable> open = new ArrayList<>();
  private TccTestParticipant participant;
  private SagaCoordinator coordinator;

  @BeforeAll
  static void schema() throws Exception {
    ds = ConvergePostgres.shared().newSchema("tcc");
    TccTestParticipant.migrate(ds);
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  private TxnProducer producer;

  /** The producer and the participant (whose HTTP side, when served, gives the branches their URLs). */
  @org.junit.jupiter.api.BeforeEach
  void participant() {
    producer = TxnProducer.builder().group("tcc-" + UUID.randomUUID().toString().substring(0, 8))
        .dataSource(ds).backend(OutboxBackend.outbox()).clock(clock).build();
    open.add(producer);
    participant = new TccTestParticipant(ds, producer);
    open.add(participant);
  }

  private void setUp(TccDefinition<?>... defs) {
    setUp(b -> b, defs);
  }

  private void setUp(java.util.function.UnaryOperator<SagaCoordinatorBuilder> settings, TccDefinition<?>... defs) {
    coordinator = settings.apply(SagaCoordinator.builder().producer(producer).tcc(defs)
        .replyTopic(TccTestParticipant.REPLIES)
        .replyPolicy(FailurePolicy.defaults().withBackoff(Duration.ofMillis(5), Duration.ofMillis(20))).clock(clock))
        .build();
    open.add(0, coordinator);
  }

  private Outcome deliver(IncomingMessage m) {
    if (m.topic().equals(TccTestParticipant.REPLIES)) {
      return coordinator.replyHandler().handle(m);
    }
    participant.handle(m);
    return Outcome.PROCESSED;
  }

  /** Delivers every message of {@code mail} and the ones they cause, but keeps those {@code hold} matches. */
  private void pump(Mailbox mail, Predicate<IncomingMessage> hold, List<IncomingMessage> held) throws Exception {
    for (List<IncomingMessage> batch = mail.next(); !batch.isEmpty(); batch = mail.next()) {
      for (IncomingMessage m : batch) {
        if (hold.test(m)) {
          held.add(m);
        } else {
          deliver(m);
        }
      }
    }
  }

  private void pump(Mailbox mail) throws Exception {
    pump(mail, m -> false, new ArrayList<>());
  }

  private static TccDefinition.Builder<String> tcc(String name) {
    return TccDefinition.builder(name, SagaCodec.json()).globalTimeout(Duration.ofSeconds(30));
  }

  private static String call(IncomingMessage m) {
    return m.topic() + " " + m.header(TccHeaders.OPERATION) + " " + m.header(TccHeaders.GLOBAL_ID) + " "
        + m.header(TccHeaders.BRANCH_ID) + " " + m.header(Envelope.TENANT) + " " + m.header(SagaHeaders.DIRECTION);
  }

  private static boolean tryOf(IncomingMessage m, String branch) {
    return branch.equals(m.header(TccHeaders.BRANCH_ID)) && "try".equals(m.header(TccHeaders.OPERATION));
  }

  @Test
  void everyBranchIsTriedThenConfirmedAndDuplicatesTakeEffectOnce() throws Exception {
    TccDefinition<String> def = tcc("transfer").branch("account", b -> b.messages("account-tcc").timeout(TIMEOUT)
        .retry(RETRY)).branch("points", b -> b.messages("points-tcc").confirmTopic("points-confirm")
            .timeout(TIMEOUT).retry(RETRY))
        .build();
    setUp(def);
    Mailbox mail = Mailbox.fromNow(ds);
    assertThat(coordinator.start(def, "t1", "{\"id\":\"t1\"}")).isTrue();
    assertThat(coordinator.start(def, "t1", "{\"id\":\"t1\"}")).as("starting twice is a no-op").isFalse();
    IncomingMessage tryAccount = mail.next().get(0);
    assertThat(call(tryAccount)).isEqualTo("account-tcc try t1 account default forward");
    participant.handle(tryAccount);
    participant.handle(tryAccount); // the broker delivers the command twice: the barrier answers DUPLICATE
    List<IncomingMessage> replies = mail.next();
    assertThat(replies).hasSize(2);
    assertThat(deliver(replies.get(0))).isEqualTo(Outcome.PROCESSED);
    assertThat(deliver(replies.get(0))).as("a redelivered reply: deduplicated").isEqualTo(Outcome.DUPLICATE);
    assertThat(deliver(replies.get(1))).as("the second reply: recorded, not applied").isEqualTo(Outcome.PROCESSED);
    List<IncomingMessage> sent = new ArrayList<>();
    pump(mail, m -> {
      if (m.header(TccHeaders.OPERATION) != null) {
        sent.add(m);
      }
      return false;
    }, new ArrayList<>());
    assertThat(state("t1")).isEqualTo("COMPLETED");
    assertThat(sent.stream().map(TccCoordinatorIT::call)).containsExactly("points-tcc try t1 points default forward",
        "account-tcc confirm t1 account default forward", "points-confirm confirm t1 points default forward");
    assertThat(events("t1")).containsExactly("STARTED", "SENT account 1", "REPLIED account 1", "SENT points 1",
        "DUPLICATE_REPLY account 1", "REPLIED points 1", "SENT account/confirm 1",
        "REPLIED account/confirm 1", "SENT points/confirm 1", "REPLIED points/confirm 1", "COMPLETED");
    assertThat(participant.calls("t1")).containsExactly("account try RAN", "account try DUPLICATE", "points try RAN",
        "account confirm RAN", "points confirm RAN");
  }

  @Test
  void aRefusedTryCancelsEveryBranchTriedTheRefusedOneAndOneThatTimedOutIncluded() throws Exception {
    TccDefinition<String> def = tcc("refused").branch("a", b -> b.messages("a-tcc").timeout(TIMEOUT).retry(RETRY))
        .branch("b", b -> b.messages("b-tcc").cancelTopic("b-cancel").timeout(TIMEOUT).retry(RETRY))
        .branch("c", b -> b.messages("c-tcc").timeout(TIMEOUT).retry(RETRY)).build();
    setUp(def);
    participant.script("t2", "b", TccOperation.TRY, "REFUSE");
    Mailbox mail = Mailbox.fromNow(ds);
    coordinator.start(def, "t2", "{}");
    IncomingMessage late = mail.next().get(0); // a's Try: held, no answer in time
    clock.advance(TIMEOUT);
    assertThat(coordinator.poll()).isEqualTo(1);
    IncomingMessage again = mail.next().get(0);
    assertThat(again.header(SagaHeaders.COMMAND_ID)).isEqualTo(late.header(SagaHeaders.COMMAND_ID));
    deliver(again);
    List<IncomingMessage> cancels = new ArrayList<>();
    pump(mail, m -> {
      if ("cancel".equals(m.header(TccHeaders.OPERATION))) {
        cancels.add(m);
      }
      return false;
    }, new ArrayList<>());
    deliver(late); // the first copy of a's Try comes after all: the barrier answers DUPLICATE, nothing runs
    pump(mail);
    assertThat(state("t2")).isEqualTo("COMPENSATED");
    assertThat(cancels.stream().map(TccCoordinatorIT::call)).containsExactly("b-cancel cancel t2 b default compensate",
        "a-tcc cancel t2 a default compensate");
    assertThat(participant.calls("t2")).containsExactly("a try RAN", "b try REFUSED", "b cancel EMPTY_ROLLBACK",
        "a cancel RAN", "a try DUPLICATE");
    assertThat(events("t2")).containsSubsequence("SENT a 1", "TIMED_OUT a 1", "RESENT a 1", "REPLIED a 1",
        "SENT b 1", "REPLIED b 1", "FAILED b 1", "COMPENSATING", "COMPENSATION_SENT b 1", "COMPENSATED b 1",
        "COMPENSATION_SENT a 1", "COMPENSATED a 1", "COMPENSATED", "DUPLICATE_REPLY a 1")
        .noneMatch(e -> e.contains(" c "));
  }

  @Test
  void theGlobalTimeoutCancelsATryNeverAnsweredWhoseLateTryIsRefusedAsHangingAndAFailingCancelIsAskedAgain()
      throws Exception {
    TccDefinition<String> def = tcc("timeout").branch("a", b -> b.messages("a-tcc").timeout(TIMEOUT).retry(RETRY))
        .branch("b", b -> b.messages("b-tcc").timeout(TIMEOUT).retry(RetryPolicy.attempts(2))).build();
    setUp(def);
    participant.script("t3", "a", TccOperation.CANCEL, "FAIL", "FAIL", "FAIL");
    Mailbox mail = Mailbox.fromNow(ds);
    coordinator.start(def, "t3", "{}");
    List<IncomingMessage> held = new ArrayList<>();
    pump(mail, m -> tryOf(m, "b"), held);
    clock.advance(TIMEOUT);
    coordinator.poll(); // RESENT b
    pump(mail, m -> tryOf(m, "b"), held);
    clock.advance(TIMEOUT);
    coordinator.poll(); // its sends are used: it waits for the global timeout
    assertThat(state("t3")).isEqualTo("RUNNING");
    clock.advance(Duration.ofSeconds(30));
    coordinator.poll();
    pump(mail, m -> tryOf(m, "b"), held);
    for (int i = 0; i < 3; i++) { // the Cancel of a fails three times: a ticket, and it is asked again
      assertThat(state("t3")).isEqualTo("COMPENSATING");
      clock.advance(Duration.ofSeconds(1));
      coordinator.poll();
      pump(mail, m -> tryOf(m, "b"), held);
    }
    assertThat(tickets("t3")).containsExactly("CANCEL_FAILING a OPEN");
    assertThat(state("t3")).isEqualTo("COMPENSATED");
    assertThat(held).hasSize(2);
    held.forEach(this::deliver); // the Tries arrive after their Cancel: refused as hanging
    pump(mail);
    assertThat(participant.calls("t3")).containsExactly("a try RAN", "b cancel EMPTY_ROLLBACK", "a cancel FAILED",
        "a cancel FAILED", "a cancel FAILED", "a cancel RAN", "b try HANGING_REFUSED", "b try HANGING_REFUSED");
    assertThat(events("t3")).containsSubsequence("SENT b 1", "RESENT b 1", "DEADLINE b 1", "COMPENSATION_SENT b 1",
        "COMPENSATED b 1", "COMPENSATION_SENT a 1", "COMPENSATION_RETRIED a 3", "TICKET a", "COMPENSATION_SENT a 4",
        "TICKET_NOTED a 4", "COMPENSATED a 4", "COMPENSATED", "LATE_REPLY b 1", "LATE_REPLY b 1");
  }

  @Test
  void aConfirmFailingThreeTimesOpensATicketAndIsAskedUntilItSucceeds() throws Exception {
    TccDefinition<String> def = tcc("confirm-fails").branch("a", b -> b.messages("a-tcc").timeout(TIMEOUT)
        .retry(RETRY)).build();
    setUp(def);
    participant.script("t4", "a", TccOperation.CONFIRM, "FAIL", "FAIL", "FAIL");
    Mailbox mail = Mailbox.fromNow(ds);
    coordinator.start(def, "t4", "{}");
    pump(mail); // Try, then the first Confirm fails
    for (int i = 0; i < 2; i++) {
      clock.advance(Duration.ofSeconds(1)); // past the backoff (at most 20 ms)
      coordinator.poll();
      pump(mail);
    }
    assertThat(state("t4")).as("still asked").isEqualTo("RUNNING");
    assertThat(tickets("t4")).containsExactly("CONFIRM_FAILING a/confirm OPEN");
    assertThatThrownBy(() -> SagaOps.of(ds, clock).compensate("t4", "ops", "cancel it")).as("a Confirm is never"
        + " cancelled").isInstanceOf(SagaOperationRefusedException.class).hasMessageContaining("a Confirm is never"
            + " cancelled");
    clock.advance(TccDefinition.DEFAULT_GLOBAL_TIMEOUT.multipliedBy(2)); // past the global timeout: no Cancel now
    coordinator.poll();
    pump(mail);
    assertThat(state("t4")).isEqualTo("COMPLETED");
    assertThat(participant.calls("t4")).containsExactly("a try RAN", "a confirm FAILED", "a confirm FAILED",
        "a confirm FAILED", "a confirm RAN");
    assertThat(events("t4")).containsSubsequence("RETRIED a/confirm 1", "RETRIED a/confirm 2", "RETRIED a/confirm 3",
        "TICKET a/confirm", "SENT a/confirm 4", "REPLIED a/confirm 4", "TICKET_NOTED a/confirm 4", "COMPLETED")
        .noneMatch(e -> e.startsWith("DEADLINE") || e.startsWith("COMPENSAT"));
    assertThat(one("SELECT reason FROM converge_saga_ticket WHERE saga_id = 't4'"))
        .contains("failed 3 times in a row; still asked").contains("succeeded (attempt 4, after 3 failures)");
  }

  @Test
  void anOperatorMayRetryATccGlobalTransactionOfAnyAgeAsTheCoordinatorSendsItsCommandsAtAnyAge() throws Exception {
    TccDefinition<String> def = tcc("confirm-old").branch("a", b -> b.messages("a-tcc").timeout(TIMEOUT)
        .retry(RETRY)).build();
    setUp(def);
    participant.script("t9", "a", TccOperation.CONFIRM, "FAIL", "FAIL", "FAIL");
    Mailbox mail = Mailbox.fromNow(ds);
    coordinator.start(def, "t9", "{}");
    pump(mail); // Try, then the first Confirm fails
    for (int i = 0; i < 2; i++) {
      clock.advance(Duration.ofSeconds(1));
      coordinator.poll();
      pump(mail);
    }
    assertThat(tickets("t9")).containsExactly("CONFIRM_FAILING a/confirm OPEN");
    // 40 days on, far past any participant retention: a TCC branch's barrier keeps an unfinished branch's rows, so
    // the coordinator still sends its Confirm, and the operator's retry (due now) is not refused either
    clock.advance(SagaBranchRetention.DEFAULT_RETENTION.plusDays(10));
    SagaOps ops = SagaOps.of(ds, clock);
    assertThat(ops.retry("t9", "alice", "the ledger is back").state()).isEqualTo(SagaState.RUNNING);
    coordinator.poll();
    pump(mail);
    assertThat(state("t9")).isEqualTo("COMPLETED");
    assertThat(participant.calls("t9")).containsExactly("a try RAN", "a confirm FAILED", "a confirm FAILED",
        "a confirm FAILED", "a confirm RAN");
    assertThat(events("t9")).anyMatch(e -> e.startsWith("OPERATOR_RETRY"))
        .noneMatch(e -> e.startsWith("RETENTION_EXCEEDED") || e.startsWith("COMPENSAT"));
  }

  @Test
  void overHttpA5xxIsAskedAgainAndTheBranchesAreConfirmed() throws Exception {
    URI base = participant.serve();
    TccDefinition<String> def = tcc("http-ok").branch("a", b -> b.http(base.resolve("/a")).timeout(TIMEOUT)
        .retry(RETRY)).branch("b", b -> b
            .http(base.resolve("/b/try"), base.resolve("/b/confirm"),
                base.resolve("/b/cancel"))
            .timeout(TIMEOUT).retry(RETRY))
        .build();
    setUp(def);
    participant.script("h1", "a", TccOperation.TRY, "503");
    coordinator.start(def, "h1", "{\"id\":\"h1\"}");
    assertThat(coordinator.poll()).isEqualTo(1); // the Try of a: 503, a new attempt after a backoff
    assertThat(state("h1")).isEqualTo("RUNNING");
    clock.advance(Duration.ofSeconds(1));
    coordinator.poll(); // a again, then b, then both Confirms, one answer after the other
    assertThat(state("h1")).isEqualTo("COMPLETED");
    assertThat(participant.calls("h1")).containsExactly("a try 503", "a try RAN", "b try RAN", "a confirm RAN",
        "b confirm RAN");
    assertThat(participant.requests).containsExactly("/a try h1 a default application/json",
        "/a try h1 a default application/json", "/b/try try h1 b default application/json",
        "/a confirm h1 a default application/json", "/b/confirm confirm h1 b default application/json");
    assertThat(events("h1")).containsExactly("STARTED", "SENT a 1", "REPLIED a 1", "RETRIED a 1", "SENT a 2",
        "REPLIED a 2", "SENT b 1", "REPLIED b 1", "SENT a/confirm 1", "REPLIED a/confirm 1", "SENT b/confirm 1",
        "REPLIED b/confirm 1", "COMPLETED");
  }

  /**
   * Issue 34: an HTTP branch's calls are made from the poll (no context on its thread) under CLIENT spans whose parent
   * is the saga's stored context, and carry their {@code traceparent}: the participant's {@link TccServlet} serves
   * each under a SERVER span of the saga's trace, with the branch's database work under it.
   */
  @Test
  void overHttpTheBranchCallsCarryTheSagasTraceIntoTheParticipantsServlet() throws Exception {
    io.converge.core.Migrations.apply(ds, "tcc");
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
        .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build();
    open.add(sdk);
    Tracing tracing = OpenTelemetryTracing.of(sdk);
    TccHttpWork work = (c, r) -> {
      sdk.getTracer("test").spanBuilder("UPDATE wallet " + r.call().operation().wireName()).startSpan().end();
      return "{}".getBytes(StandardCharsets.UTF_8);
    };
    TccServlet servlet = TccServlet.builder().dataSource(ds).tracing(tracing).work(work, work, work).build();
    Tomcat tomcat = new Tomcat();
    tomcat.setBaseDir(Files.createTempDirectory("tomcat-tcc-trace").toString());
    tomcat.setPort(0);
    tomcat.getConnector();
    Tomcat.addServlet(tomcat.addContext("/wallet", null), "pay", servlet).addMapping("/pay");
    tomcat.start();
    open.add(() -> {
      tomcat.stop();
      tomcat.destroy();
    });
    URI url = URI.create("http://127.0.0.1:" + tomcat.getConnector().getLocalPort() + "/wallet/pay");
    TccDefinition<String> def = tcc("http-traced").branch("pay", b -> b.http(url).timeout(TIMEOUT).retry(RETRY))
        .build();
    setUp(b -> b.tracing(tracing), def);
    Span request = sdk.getTracer("test").spanBuilder("POST /orders").setSpanKind(SpanKind.SERVER).startSpan();
    try (Scope ignored = request.makeCurrent()) {
      coordinator.start(def, "ht1", "{}");
    } finally {
      request.end();
    }
    assertThat(Span.current().getSpanContext().isValid()).isFalse();
    coordinator.poll(); // the Try, then the Confirm, on the coordinator's HTTP thread
    assertThat(state("ht1")).isEqualTo("COMPLETED");

    String trace = request.getSpanContext().getTraceId();
    List<SpanData> spans = exporter.getFinishedSpanItems();
    SpanData saga = span(spans, "saga http-traced");
    SpanData tryCall = span(spans, "saga step pay");
    SpanData confirmCall = span(spans, "saga step pay/confirm");
    SpanData tryServed = span(spans, "tcc try pay");
    SpanData confirmServed = span(spans, "tcc confirm pay");
    assertThat(List.of(saga, tryCall, confirmCall, tryServed, confirmServed, span(spans, "UPDATE wallet try"),
        span(spans, "UPDATE wallet confirm"))).allSatisfy(
            d -> assertThat(d.getTraceId()).as(d.getName())
                .isEqualTo(trace));
    assertThat(tryCall.getKind()).isEqualTo(SpanKind.CLIENT);
    assertThat(tryCall.getParentSpanId()).isEqualTo(saga.getSpanId());
    assertThat(confirmCall.getParentSpanId()).isEqualTo(saga.getSpanId());
    assertThat(tryServed.getKind()).isEqualTo(SpanKind.SERVER);
    assertThat(tryServed.getParentSpanId()).as("the request's traceparent").isEqualTo(tryCall.getSpanId());
    assertThat(confirmServed.getParentSpanId()).isEqualTo(confirmCall.getSpanId());
    assertThat(span(spans, "UPDATE wallet try").getParentSpanId()).isEqualTo(tryServed.getSpanId());
    assertThat(tryCall.getAttributes().get(AttributeKey.stringKey("converge.saga.id"))).isEqualTo("ht1");
    assertThat(tryCall.getAttributes().get(AttributeKey.stringKey("converge.saga.attempt"))).isEqualTo("1");
    assertThat(spans).filteredOn(d -> "ht1".equals(d.getAttributes().get(AttributeKey.stringKey("converge.saga.id"))))
        .hasSizeGreaterThanOrEqualTo(5).allSatisfy(d -> assertThat(d.getTraceId()).as(d.getName()).isEqualTo(trace));
  }

  private static SpanData span(List<SpanData> spans, String name) {
    return spans.stream().filter(d -> d.getName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError("no span " + name + " in " + spans));
  }

  @Test
  void overHttpAConnectionRefusedATimeoutAndAHangingRefusalEndInCancels() throws Exception {
    URI base = participant.serve();
    URI closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = URI.create("http://127.0.0.1:" + s.getLocalPort() + "/closed");
    }
    RetryPolicy once = new RetryPolicy(1, Duration.ofMillis(10), Duration.ofMillis(20));
    TccDefinition<String> refused = tcc("http-refused").branch("ok", b -> b.http(base.resolve("/ok")).retry(RETRY))
        .branch("closed", b -> b.http(closed, base.resolve("/closed"), base.resolve("/closed"))
            .retry(new RetryPolicy(2, Duration.ofMillis(10), Duration.ofMillis(20))))
        .build();
    TccDefinition<String> slow = tcc("http-slow").branch("slow", b -> b.http(base.resolve("/slow"))
        .timeout(Duration.ofMillis(300)).retry(once)).build();
    TccDefinition<String> hanging = tcc("http-hanging").branch("ok", b -> b.http(base.resolve("/ok")).retry(RETRY))
        .branch("h", b -> b.http(base.resolve("/h")).retry(RETRY)).build();
    TccDefinition<String> misconfigured = tcc("http-404").branch("nowhere", b -> b.http(base.resolve("/nowhere"))
        .retry(once)).build();
    setUp(refused, slow, hanging, misconfigured);
    // the Try answers after 3.5 s (its timeout: 0.3 s), when the Cancel of the third poll ran, even on a loaded machine
    participant.script("h3", "slow", TccOperation.TRY, "SLOW:3500");
    participant.script("h5", "nowhere", TccOperation.TRY, "404");
    assertThat(participant.cancelFirst("h4", "h")).isEqualTo(TccTestParticipant.Result.EMPTY_ROLLBACK);
    coordinator.start(refused, "h2", "{}");
    coordinator.start(slow, "h3", "{}");
    coordinator.start(hanging, "h4", "{}");
    coordinator.start(misconfigured, "h5", "{}");
    coordinator.poll(); // the three at once, on the coordinator's HTTP threads
    assertThat(state("h4")).as("409 HANGING_REFUSED: a refused Try").isEqualTo("COMPENSATED");
    clock.advance(Duration.ofSeconds(1));
    coordinator.poll(); // h2's second Try: refused again; its sends are used
    assertThat(state("h2")).isEqualTo("RUNNING");
    assertThat(state("h3")).isEqualTo("RUNNING");
    assertThat(tickets("h5")).as("404: outside the protocol, its one send used").containsExactly(
        "MISCONFIGURED nowhere OPEN");
    assertThat(one("SELECT reason FROM converge_saga_ticket WHERE saga_id = 'h5'")).contains("HTTP 404 from " + base
        + "/nowhere");
    clock.advance(Duration.ofSeconds(30));
    coordinator.poll(); // the global timeout: h2 and h3 cancel
    assertThat(state("h2")).isEqualTo("COMPENSATED");
    assertThat(state("h3")).isEqualTo("COMPENSATED");
    assertThat(state("h5")).isEqualTo("COMPENSATED");
    assertThat(participant.calls("h5")).containsExactly("nowhere try 404", "nowhere cancel EMPTY_ROLLBACK");
    await().atMost(Duration.ofSeconds(10)).until(() -> participant.calls("h3").size() == 2);

    assertThat(participant.calls("h2")).containsExactly("ok try RAN", "closed cancel EMPTY_ROLLBACK",
        "ok cancel RAN");
    assertThat(one("SELECT string_agg(payload, ' | ' ORDER BY seq) FROM converge_saga_event WHERE saga_id = 'h2'"
        + " AND kind = 'REPLIED' AND step = 'closed'")).contains("TECHNICAL_FAILURE CONNECTION_REFUSED");
    assertThat(events("h2")).containsSubsequence("SENT closed 1", "RETRIED closed 1", "SENT closed 2",
        "REPLIED closed 2", "DEADLINE closed 2", "COMPENSATION_SENT closed 1", "COMPENSATED closed 1",
        "COMPENSATION_SENT ok 1", "COMPENSATED ok 1", "COMPENSATED");

    assertThat(participant.calls("h3")).as("the Cancel came first, the slow Try after it")
        .containsExactly("slow cancel EMPTY_ROLLBACK", "slow try HANGING_REFUSED");
    assertThat(one("SELECT payload FROM converge_saga_event WHERE saga_id = 'h3' AND kind = 'REPLIED'"))
        .startsWith("TECHNICAL_FAILURE TIMEOUT");

    assertThat(participant.calls("h4")).containsExactly("h cancel EMPTY_ROLLBACK", "ok try RAN",
        "h try HANGING_REFUSED", "h cancel DUPLICATE", "ok cancel RAN");
    assertThat(one("SELECT payload FROM converge_saga_event WHERE saga_id = 'h4' AND kind = 'REPLIED'"
        + " AND step = 'h'")).startsWith("BUSINESS_FAILURE HANGING_REFUSED");
  }

  @Test
  void overHttpA200WithoutTheOutcomeHeaderIsAMisconfigurationNeverASuccess() throws Exception {
    URI base = participant.serve();
    TccDefinition<String> def = tcc("http-page").branch("p", b -> b.http(base.resolve("/p")).timeout(TIMEOUT)
        .retry(RETRY)).build();
    setUp(def);
    participant.script("g1", "p", TccOperation.TRY, "200", "200", "200"); // a login page, three times
    participant.script("g2", "p", TccOperation.CONFIRM, "200");
    coordinator.start(def, "g1", "{}");
    coordinator.start(def, "g2", "{}");
    for (int i = 0; i < 3; i++) {
      coordinator.poll();
      clock.advance(Duration.ofSeconds(1));
    }
    assertThat(state("g1")).as("nothing reserved: never a success").isEqualTo("RUNNING");
    assertThat(participant.calls("g1")).containsExactly("p try 200", "p try 200", "p try 200");
    assertThat(tickets("g1")).containsExactly("MISCONFIGURED p OPEN");
    assertThat(one("SELECT payload FROM converge_saga_event WHERE saga_id = 'g1' AND kind = 'REPLIED' LIMIT 1"))
        .startsWith("TECHNICAL_FAILURE MISCONFIGURED HTTP 200 without converge-tcc-outcome");
    assertThat(state("g2")).isEqualTo("COMPLETED");
    assertThat(participant.calls("g2")).as("the Confirm answered by a page is asked again").containsExactly(
        "p try RAN", "p confirm 200", "p confirm RAN");
  }

  @Test
  void overHttpALargeAnswerIsReadInPartAndStoredBounded() throws Exception {
    URI base = participant.serve();
    TccDefinition<String> def = tcc("http-big").branch("p", b -> b.http(base.resolve("/p")).timeout(TIMEOUT)
        .retry(RETRY)).build();
    setUp(def);
    participant.script("g3", "p", TccOperation.TRY, "BIG503"); // a 1 MiB error page
    coordinator.start(def, "g3", "{}");
    coordinator.poll();
    assertThat(state("g3")).isEqualTo("RUNNING");
    assertThat(Integer.parseInt(one("SELECT length(last_error) FROM converge_saga WHERE id = 'g3'")))
        .isLessThan(4200);
    clock.advance(Duration.ofSeconds(1));
    coordinator.poll();
    assertThat(state("g3")).isEqualTo("COMPLETED");
    assertThat(participant.calls("g3")).containsExactly("p try BIG503", "p try RAN", "p confirm RAN");
    assertThat(Integer.parseInt(one("SELECT max(length(payload)) FROM converge_saga_event WHERE saga_id = 'g3'")))
        .isLessThan(4200);
    assertThat(one("SELECT payload FROM converge_saga_event WHERE saga_id = 'g3' AND kind = 'REPLIED'"
        + " ORDER BY seq LIMIT 1")).startsWith("TECHNICAL_FAILURE HTTP_503 xxx").endsWith("characters in all]");
  }

  @Test
  void aPollClaimsNoMoreHttpCallsThanItCanStartAtOnce() throws Exception {
    URI base = participant.serve();
    TccDefinition<String> def = tcc("http-slots").branch("s", b -> b.http(base.resolve("/s")).timeout(TIMEOUT)
        .retry(RETRY)).build();
    setUp(b -> b.httpConcurrency(1), def);
    participant.script("q1", "s", TccOperation.TRY, "SLOW:300");
    participant.script("q2", "s", TccOperation.TRY, "SLOW:300");
    coordinator.start(def, "q1", "{}");
    coordinator.start(def, "q2", "{}");
    coordinator.poll(); // (it may also set aside sagas of the other tests, whose definitions it does not know)
    assertThat(state("q1")).isEqualTo("COMPLETED");
    assertThat(state("q2")).isEqualTo("COMPLETED");
    // one HTTP thread: the second saga's intent (its timeout's start) is recorded when the first's calls are done,
    // not while its call would wait in a queue
    List<String> order = list("SELECT saga_id || ' ' || kind FROM converge_saga_event WHERE saga_id IN ('q1', 'q2')"
        + " AND kind IN ('SENT', 'COMPLETED') AND coalesce(step, '') <> 's/confirm' ORDER BY seq");
    assertThat(order).hasSize(4);
    String first = order.get(0).substring(0, 2);
    String second = first.equals("q1") ? "q2" : "q1";
    assertThat(order).containsExactly(first + " SENT", first + " COMPLETED", second + " SENT",
        second + " COMPLETED");
  }

  private static String state(String id) throws Exception {
    return one("SELECT state FROM converge_saga WHERE id = '" + id + "'");
  }

  private static List<String> events(String id) throws Exception {
    return list("SELECT kind || coalesce(' ' || step, '') || coalesce(' ' || attempt, '') FROM converge_saga_event"
        + " WHERE saga_id = '" + id + "' ORDER BY seq");
  }

  private static List<String> tickets(String id) throws Exception {
    return list("SELECT kind || ' ' || step || ' ' || status FROM converge_saga_ticket WHERE saga_id = '" + id
        + "' ORDER BY id");
  }

  private static String one(String sql) throws Exception {
    List<String> l = list(sql);
    return l.isEmpty() ? null : l.get(0);
  }

  private static List<String> list(String sql) throws Exception {
    return TccTestParticipant.rows(ds, sql);
  }
}
