package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.core.Envelope;
import io.converge.core.tracing.OpenTelemetryTracing;
import io.converge.core.tracing.Tracing;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The coordinator and its participants on a real PostgreSQL through the outbox backend, with the committed messages
 * delivered by the test ({@link Mailbox}): held, dropped, repeated or reordered as a broker may, deterministically,
 * with time moved by hand ({@link MutableClock}). The same flows on a real broker: {@link SagaEndToEndIT}.
 */
class SagaCoordinatorIT {

  /** One schema for the class (migrating one takes seconds on a busy machine); each test has its own sagas. */
  private static DataSource ds;

  private final MutableClock clock = new MutableClock();
  private final List<AutoCloseable> open = new ArrayList<>();

  private OrderSaga saga(Consumer<SagaCoordinatorBuilder> settings) throws Exception {
    return saga(ds, settings);
  }

  private OrderSaga saga(DataSource ds, Consumer<SagaCoordinatorBuilder> settings) throws Exception {
    return saga(ds, settings, Set.of());
  }

  private OrderSaga saga(DataSource ds, Consumer<SagaCoordinatorBuilder> settings, Set<String> withoutUndo)
      throws Exception {
    TxnProducer producer = TxnProducer.builder().group("saga-" + UUID.randomUUID().toString().substring(0, 8))
        .dataSource(ds).backend(OutboxBackend.outbox()).clock(clock).build();
    open.add(producer);
    OrderSaga s = new OrderSaga(ds, producer, "", clock, settings, withoutUndo);
    open.add(s.coordinator);
    return s;
  }

  private OrderSaga saga() throws Exception {
    return saga(b -> {
    });
  }

  @BeforeAll
  static void schema() throws Exception {
    ds = ConvergePostgres.shared().newSchema("saga");
    OrderSaga.migrate(ds);
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  private static List<IncomingMessage> only(List<IncomingMessage> all, Predicate<IncomingMessage> p) {
    return all.stream().filter(p).toList();
  }

  private static boolean reply(IncomingMessage m) {
    return m.topic().endsWith(OrderSaga.REPLIES);
  }

  /** Polls until nothing is due (other tests' sagas in the shared schema may be due too: no exact counts). */
  private static void pollAll(OrderSaga s) {
    for (int i = 0; i < 20 && s.coordinator.poll() > 0; i++) {
      // drive every due saga
    }
  }

  /** As {@link OrderSaga#pump}, but the messages {@code hold} matches are kept in {@code held}, not delivered. */
  private static void pumpHolding(OrderSaga s, Mailbox mail, Predicate<IncomingMessage> hold,
      List<IncomingMessage> held) throws Exception {
    for (List<IncomingMessage> batch = mail.next(); !batch.isEmpty(); batch = mail.next()) {
      for (IncomingMessage m : batch) {
        if (hold.test(m)) {
          held.add(m);
        } else {
          s.deliver(m);
        }
      }
    }
  }

  /** A reply to {@code command} as a participant that is not a {@link SagaParticipant} may send it. */
  private static IncomingMessage replyTo(IncomingMessage command, String outcome, String reason) {
    IncomingMessage.Builder b = IncomingMessage.builder().topic(OrderSaga.REPLIES).headers(command.headers())
        .header(Envelope.MESSAGE_ID, UUID.randomUUID().toString()).header(SagaHeaders.OUTCOME, outcome)
        .payload("{\"amount\":\"12.00 EUR\"}".getBytes(StandardCharsets.UTF_8));
    if (reason != null) {
      b.header(SagaHeaders.REASON, reason);
    }
    return b.build();
  }

  private static String attemptOf(IncomingMessage m) {
    return m.header(SagaHeaders.STEP) + " " + m.header(SagaHeaders.DIRECTION) + " " + m.header(SagaHeaders.ATTEMPT);
  }

  /**
   * A mixed saga (an ordinary saga holding the Try and the Confirm of a TCC branch): debit (Try, its Cancel the
   * compensation) → ship → debit-confirm → notify; the test answers as the participants.
   */
  private SagaCoordinator mixed(OrderSaga s) {
    Consumer<SagaStep.RemoteSpec<String>> retry = r -> r.timeout(OrderSaga.STEP_TIMEOUT)
        .retry(new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(20)));
    SagaDefinition<String> def = SagaDefinition.builder("pay", SagaCodec.json())
        .remote("debit", r -> retry.accept(r.participant("account").tccTry("debit").command("pay-acc-cmd",
            SagaCodec::utf8).compensation("pay-acc-comp", SagaCodec::utf8)))
        .remote("ship", r -> retry.accept(r.participant("shipping").command("pay-ship-cmd", SagaCodec::utf8)
            .compensation("pay-ship-comp", SagaCodec::utf8)))
        .remote("debit-confirm", r -> retry.accept(r.participant("account").tccConfirm("debit")
            .command("pay-acc-cmd", SagaCodec::utf8)))
        .remote("notify", r -> retry.accept(r.participant("mailer").command("pay-mail-cmd", SagaCodec::utf8)
            .compensation("pay-mail-comp", SagaCodec::utf8)))
        .deadline(OrderSaga.DEADLINE).compensationTimeout(OrderSaga.STEP_TIMEOUT).compensationAttempts(2)
        .build();
    SagaCoordinator c = SagaCoordinator.builder().producer(s.producer).definitions(def)
        .replyTopic(OrderSaga.REPLIES).clock(clock).build();
    open.add(c);
    mixedDefinition = def;
    return c;
  }

  private SagaDefinition<String> mixedDefinition;

  /** The one command of saga {@code id} committed since the last look, as {@code step direction attempt}. */
  private static IncomingMessage commandOf(Mailbox mail, String id) throws Exception {
    List<IncomingMessage> l = only(mail.next(), m -> id.equals(m.header(SagaHeaders.SAGA_ID)) && !reply(m));
    assertThat(l).as("one command of " + id).hasSize(1);
    return l.get(0);
  }

  @Test
  void aMixedSagaNeverCancelsAConfirmedBranchAndAsksItsCancelUntilItSucceeds() throws Exception {
    OrderSaga s = saga();
    SagaCoordinator c = mixed(s);
    Mailbox mail = Mailbox.fromNow(s.ds);
    // S1: the step after the Confirm is refused: the branch is confirmed (the money moved), its Cancel is never sent
    c.start(mixedDefinition, "x1", "{\"id\":\"x1\"}");
    for (String step : List.of("debit forward 1", "ship forward 1", "debit-confirm forward 1")) {
      IncomingMessage m = commandOf(mail, "x1");
      assertThat(attemptOf(m)).isEqualTo(step);
      c.replyHandler().handle(replyTo(m, "SUCCESS", null));
    }
    IncomingMessage notify = commandOf(mail, "x1");
    assertThat(attemptOf(notify)).isEqualTo("notify forward 1");
    c.replyHandler().handle(replyTo(notify, "BUSINESS_FAILURE", "NO_ADDRESS"));
    assertThat(only(mail.next(), m -> "x1".equals(m.header(SagaHeaders.SAGA_ID)))).as("no Cancel, no compensation")
        .isEmpty();
    assertThat(s.state("x1")).isEqualTo("STOPPED");
    assertThat(s.events("x1")).endsWith("FAILED notify 1", "COMPENSATING", "STOPPED debit-confirm",
        "TICKET debit-confirm").noneMatch(e -> e.startsWith("COMPENSATION_SENT"));
    assertThat(s.list("SELECT kind || ' ' || step || ' ' || status FROM converge_saga_ticket WHERE saga_id = 'x1'"))
        .containsExactly("ANOMALY debit-confirm OPEN");
    assertThat(s.one("SELECT reason FROM converge_saga_ticket WHERE saga_id = 'x1'")).contains("branch 'debit'")
        .contains("confirmed").contains("ship, debit");
    clock.advance(Duration.ofHours(1));
    c.poll();
    assertThat(only(mail.next(), m -> "x1".equals(m.header(SagaHeaders.SAGA_ID)))).as("automation stopped")
        .isEmpty();

    // S2: a Cancel failing more often than compensationAttempts (2) is still asked, with a ticket, until it succeeds
    c.start(mixedDefinition, "x2", "{\"id\":\"x2\"}");
    c.replyHandler().handle(replyTo(commandOf(mail, "x2"), "SUCCESS", null));
    c.replyHandler().handle(replyTo(commandOf(mail, "x2"), "BUSINESS_FAILURE", "NO_STOCK"));
    for (int i = 1; i <= 4; i++) {
      IncomingMessage cancel = commandOf(mail, "x2");
      assertThat(attemptOf(cancel)).isEqualTo("debit compensate " + i);
      c.replyHandler().handle(replyTo(cancel, "TECHNICAL_FAILURE", "ACCOUNT_DOWN"));
      assertThat(s.state("x2")).as("still compensating after failure " + i).isEqualTo("COMPENSATING");
      clock.advance(Duration.ofSeconds(1));
      c.poll();
    }
    assertThat(s.list("SELECT kind || ' ' || step || ' ' || status FROM converge_saga_ticket WHERE saga_id = 'x2'"))
        .containsExactly("CANCEL_FAILING debit OPEN");
    c.replyHandler().handle(replyTo(commandOf(mail, "x2"), "SUCCESS", null));
    assertThat(s.state("x2")).isEqualTo("COMPENSATED");
    assertThat(s.events("x2")).contains("TICKET_NOTED debit 5").noneMatch(e -> e.startsWith("COMPENSATION_FAILED"));
    // a Cancel refused (a business failure) breaks the TCC contract: an anomaly, not a retry
    c.start(mixedDefinition, "x3", "{\"id\":\"x3\"}");
    c.replyHandler().handle(replyTo(commandOf(mail, "x3"), "SUCCESS", null));
    c.replyHandler().handle(replyTo(commandOf(mail, "x3"), "BUSINESS_FAILURE", "NO_STOCK"));
    c.replyHandler().handle(replyTo(commandOf(mail, "x3"), "BUSINESS_FAILURE", "UNKNOWN_TRY"));
    assertThat(s.state("x3")).isEqualTo("STOPPED");
    assertThat(s.list("SELECT kind || ' ' || step FROM converge_saga_ticket WHERE saga_id = 'x3'"))
        .containsExactly("ANOMALY debit");
  }

  @Test
  void anOperatorMayRetryAMixedSagaAtItsTccStepAtAnyAgeButNotAtASagaStepPastTheRetention() throws Exception {
    OrderSaga s = saga();
    SagaCoordinator c = mixed(s);
    Mailbox mail = Mailbox.fromNow(s.ds);
    c.start(mixedDefinition, "x4", "{\"id\":\"x4\"}");
    c.replyHandler().handle(replyTo(commandOf(mail, "x4"), "SUCCESS", null));
    c.replyHandler().handle(replyTo(commandOf(mail, "x4"), "SUCCESS", null));
    IncomingMessage confirm = commandOf(mail, "x4");
    assertThat(attemptOf(confirm)).isEqualTo("debit-confirm forward 1");
    c.replyHandler().handle(replyTo(confirm, "TECHNICAL_FAILURE", "ACCOUNT_DOWN")); // asked again after a backoff
    c.start(mixedDefinition, "x5", "{\"id\":\"x5\"}");
    c.replyHandler().handle(replyTo(commandOf(mail, "x5"), "SUCCESS", null));
    assertThat(attemptOf(commandOf(mail, "x5"))).isEqualTo("ship forward 1"); // never answered

    clock.advance(SagaBranchRetention.DEFAULT_RETENTION.plusDays(10)); // 40 days: past the participants' retention
    SagaOps ops = SagaOps.of(s.ds, clock);
    assertThatThrownBy(() -> ops.retry("x5", "alice", null)).as("its ship command could run twice")
        .isInstanceOf(SagaTooOldException.class);
    assertThat(ops.retry("x4", "alice", "the ledger is back").state()).as("a Confirm is sent at any age")
        .isEqualTo(SagaState.RUNNING);
    c.poll();
    assertThat(attemptOf(commandOf(mail, "x4"))).startsWith("debit-confirm forward");
  }

  @Test
  void threeStepsAndALocalOneComplete() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    assertThat(s.start("s1", "")).isTrue();
    assertThat(s.start("s1", "")).as("starting twice is a no-op").isFalse();
    s.pump(mail);
    assertThat(s.state("s1")).isEqualTo("COMPLETED");
    assertThat(s.effects("s1")).containsExactly("reserve forward", "debit forward", "ship forward",
        "mark-paid forward");
    assertThat(s.events("s1")).containsExactly("STARTED", "SENT reserve 1", "REPLIED reserve 1", "SENT debit 1",
        "REPLIED debit 1", "SENT ship 1", "REPLIED ship 1", "LOCAL_DONE mark-paid 1", "COMPLETED");
    assertThat(s.one("SELECT next_attempt_at FROM converge_saga WHERE id = 's1'")).isNull();
  }

  /**
   * Issue 34: a saga is one trace. The start's context (here the request's span) is the parent of the saga's span,
   * whose context the saga's row stores; every step's span is its child: the first command, the participant's
   * processing (its child) and its reply, the reply's application, the next command, and the re-sends after a timeout,
   * by this coordinator's poll and by a new coordinator instance reading the row after the first stopped (both on
   * a thread with no context: only the stored one links them). A row without a context (a saga of before the
   * migration) starts a new trace at each span, and is driven as before.
   */
  @Test
  void aSagasCommandsRepliesAndStepsAreOneTraceAcrossResendsAndANewCoordinator() throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    try (OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
        .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build()) {
      Tracing tracing = OpenTelemetryTracing.of(sdk);
      TxnProducer producer = TxnProducer.builder().group("saga-" + UUID.randomUUID().toString().substring(0, 8))
          .dataSource(ds).backend(OutboxBackend.outbox()).clock(clock).tracing(tracing).build();
      open.add(producer);
      OrderSaga s = new OrderSaga(ds, producer, "", clock, b -> b.tracing(tracing));
      open.add(s.coordinator);
      Mailbox mail = Mailbox.fromNow(ds);
      Span request = sdk.getTracer("test").spanBuilder("POST /orders").setSpanKind(SpanKind.SERVER).startSpan();
      try (Scope ignored = request.makeCurrent()) {
        assertThat(s.start("traced-1", "")).isTrue();
        assertThat(s.start("traced-0", "")).isTrue(); // its row loses its context below
      } finally {
        request.end();
      }
      String trace = request.getSpanContext().getTraceId();
      assertThat(s.one("SELECT traceparent FROM converge_saga WHERE id = 'traced-1'")).as("stored").contains(trace);
      s.one("UPDATE converge_saga SET traceparent = NULL WHERE id = 'traced-0' RETURNING id");
      IncomingMessage reserve = next(mail, "traced-1");
      assertThat(reserve.header(Envelope.TRACEPARENT)).as("the first command").contains(trace);
      IdempotentHandler inventory = SagaParticipant.builder("inventory").producer(producer).tracing(tracing)
          .step("reserve", (c, m) -> "{}".getBytes(StandardCharsets.UTF_8)).build().handler("inventory-traced");
      assertThat(inventory.handle(reserve)).isEqualTo(Outcome.PROCESSED);
      IncomingMessage reply = next(mail, "traced-1");
      assertThat(reply.topic()).isEqualTo(OrderSaga.REPLIES);
      assertThat(reply.header(Envelope.TRACEPARENT)).as("the participant's reply").contains(trace);
      assertThat(s.deliver(reply)).isEqualTo(Outcome.PROCESSED);
      IncomingMessage debit = next(mail, "traced-1");
      assertThat(debit.header(SagaHeaders.STEP)).isEqualTo("debit");
      assertThat(debit.header(Envelope.TRACEPARENT)).as("the next step's command").contains(trace);
      // the debit is lost: its timeout re-sends it from the poll, a thread with no context
      assertThat(Span.current().getSpanContext().isValid()).isFalse();
      clock.advance(OrderSaga.STEP_TIMEOUT);
      pollAll(s);
      IncomingMessage resent = next(mail, "traced-1");
      assertThat(resent.header(SagaHeaders.COMMAND_ID)).isEqualTo(debit.header(SagaHeaders.COMMAND_ID));
      assertThat(resent.header(Envelope.TRACEPARENT)).as("re-sent by the poll").contains(trace);
      // the coordinator stops; a new instance (a restart) reads the row and asks again in the saga's trace
      s.coordinator.close();
      OrderSaga restarted = new OrderSaga(ds, producer, "", clock, b -> b.tracing(tracing));
      open.add(restarted.coordinator);
      clock.advance(OrderSaga.STEP_TIMEOUT);
      pollAll(restarted);
      IncomingMessage again = next(mail, "traced-1");
      assertThat(again.header(SagaHeaders.COMMAND_ID)).isEqualTo(debit.header(SagaHeaders.COMMAND_ID));
      assertThat(again.header(Envelope.TRACEPARENT)).as("re-sent by the new coordinator").contains(trace);
      IdempotentHandler account = SagaParticipant.builder("account").producer(producer).tracing(tracing)
          .step("debit", (c, m) -> "{}".getBytes(StandardCharsets.UTF_8)).build().handler("account-traced");
      assertThat(account.handle(again)).isEqualTo(Outcome.PROCESSED);
      IncomingMessage debited = next(mail, "traced-1");
      assertThat(restarted.deliver(debited)).isEqualTo(Outcome.PROCESSED);
      IncomingMessage ship = next(mail, "traced-1");
      assertThat(ship.header(SagaHeaders.STEP)).isEqualTo("ship");
      assertThat(ship.header(Envelope.TRACEPARENT)).as("the step after the re-sends").contains(trace);
      // the saga without a stored context is driven as before, its spans in traces of their own
      assertThat(restarted.events("traced-0")).contains("RESENT reserve 1");
      assertThat(restarted.state("traced-0")).isEqualTo("RUNNING");

      List<SpanData> spans = exporter.getFinishedSpanItems();
      SpanData saga = spans.stream().filter(d -> d.getName().equals("saga order") && "traced-1".equals(
          d.getAttributes().get(AttributeKey.stringKey("converge.saga.id")))).findFirst().orElseThrow();
      assertThat(saga.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
      List<SpanData> steps = spans.stream().filter(d -> "traced-1".equals(
          d.getAttributes().get(AttributeKey.stringKey("converge.saga.id"))) && d != saga).toList();
      assertThat(steps).allSatisfy(d -> {
        assertThat(d.getTraceId()).as(d.getName()).isEqualTo(trace);
        assertThat(d.getParentSpanId()).as(d.getName() + ": a child of the saga's span").isEqualTo(saga.getSpanId());
      });
      assertThat(steps).extracting(d -> d.getName() + " " + d.getAttributes().get(AttributeKey.stringKey(
          "converge.saga.event")) + " " + d.getAttributes().get(AttributeKey.stringKey("converge.saga.attempt")))
          .containsExactly("saga step reserve SENT 1", "saga step debit SENT 1", "saga step reserve REPLIED 1",
              "saga step debit RESENT 1", "saga step debit RESENT 1", "saga step ship SENT 1",
              "saga step debit REPLIED 1");
      // every message span of the saga (the publishes, the participants' and the coordinator's processing)
      Set<String> messages = Set.of(reserve.envelopeMessageId(), reply.envelopeMessageId(),
          debit.envelopeMessageId(), resent.envelopeMessageId(), again.envelopeMessageId(), debited.envelopeMessageId(),
          ship.envelopeMessageId());
      assertThat(spans).filteredOn(d -> messages.contains(String.valueOf(d.getAttributes().get(AttributeKey.stringKey(
          "messaging.message.id"))))).hasSizeGreaterThanOrEqualTo(11)
          .allSatisfy(d -> assertThat(d.getTraceId()).as(d.getName()).isEqualTo(trace));
      assertThat(spans).filteredOn(d -> d.getKind() == SpanKind.CONSUMER)
          .allSatisfy(d -> assertThat(d.getTraceId()).as(d.getName()).isEqualTo(trace))
          .extracting(SpanData::getName).containsExactly("process inventory-cmd", "process saga-replies",
              "process account-cmd", "process saga-replies");
      assertThat(spans).filteredOn(d -> "traced-0".equals(d.getAttributes().get(AttributeKey.stringKey(
          "converge.saga.id"))) && "RESENT".equals(d.getAttributes().get(
              AttributeKey.stringKey(
                  "converge.saga.event"))))
          .hasSize(2).noneMatch(d -> d.getTraceId().equals(trace));
    }
  }

  /** The next message of saga {@code id} in {@code mail} (other tests' sagas share the schema and may be due). */
  private static IncomingMessage next(Mailbox mail, String id) throws Exception {
    for (List<IncomingMessage> batch = mail.next(); !batch.isEmpty(); batch = mail.next()) {
      List<IncomingMessage> mine = only(batch, m -> id.equals(m.header(SagaHeaders.SAGA_ID)));
      if (!mine.isEmpty()) {
        assertThat(mine).as("one message of " + id + " at a time").hasSize(1);
        return mine.get(0);
      }
    }
    throw new AssertionError("no message of saga " + id);
  }

  @Test
  void aBusinessFailureCompensatesTheStepsBeforeItLastFirst() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("s2", ",\"refuse\":\"ship\"");
    s.start("s3", ",\"refuse\":\"reserve\"");
    s.pump(mail);
    assertThat(s.state("s2")).isEqualTo("COMPENSATED");
    assertThat(s.effects("s2")).containsExactly("reserve forward", "debit forward", "debit compensate",
        "reserve compensate");
    assertThat(s.events("s2")).containsSubsequence("REPLIED ship 1", "FAILED ship 1", "COMPENSATING",
        "COMPENSATION_SENT debit 1", "COMPENSATION_REPLIED debit 1", "COMPENSATED debit 1",
        "COMPENSATION_SENT reserve 1", "COMPENSATED reserve 1", "COMPENSATED");
    assertThat(s.events("s2")).doesNotContain("COMPENSATION_SENT ship 1");
    // the first step refused: nothing was done, nothing is compensated
    assertThat(s.state("s3")).isEqualTo("COMPENSATED");
    assertThat(s.effects("s3")).isEmpty();
    assertThat(s.events("s3")).noneMatch(e -> e.startsWith("COMPENSATION_SENT"));
  }

  @Test
  void aDuplicateReplyIsRecordedAndNotAppliedTwice() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("s4", "");
    s.deliver(mail.next().get(0));
    IncomingMessage reserved = mail.next().get(0);
    assertThat(s.deliver(reserved)).isEqualTo(Outcome.PROCESSED);
    assertThat(s.deliver(reserved)).as("the broker's redelivery: deduplicated").isEqualTo(Outcome.DUPLICATE);
    IncomingMessage copy = IncomingMessage.builder().topic(reserved.topic()).headers(reserved.headers())
        .header(Envelope.MESSAGE_ID, UUID.randomUUID().toString()).payload(reserved.payload()).build();
    assertThat(s.deliver(copy)).as("a second reply (another message id)").isEqualTo(Outcome.PROCESSED);
    s.pump(mail);
    assertThat(s.state("s4")).isEqualTo("COMPLETED");
    assertThat(s.events("s4")).containsOnlyOnce("REPLIED reserve 1", "SENT debit 1")
        .contains("DUPLICATE_REPLY reserve 1");
    assertThat(s.effects("s4")).containsOnlyOnce("reserve forward", "debit forward");
  }

  @Test
  void aTimedOutStepWhoseParticipantSucceededIsAskedAgainAndCompletes() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("s5", "");
    IncomingMessage command = mail.next().get(0);
    s.deliver(command);
    assertThat(only(mail.next(), SagaCoordinatorIT::reply)).as("the reply, lost").hasSize(1);
    assertThat(s.coordinator.poll()).as("not due before its timeout").isZero();
    clock.advance(OrderSaga.STEP_TIMEOUT);
    assertThat(s.coordinator.poll()).isEqualTo(1);
    List<IncomingMessage> again = mail.next();
    assertThat(again).hasSize(1);
    assertThat(again.get(0).header(SagaHeaders.COMMAND_ID)).as("the same command")
        .isEqualTo(command.header(SagaHeaders.COMMAND_ID));
    assertThat(again.get(0).envelopeMessageId()).isNotEqualTo(command.envelopeMessageId());
    s.deliver(again.get(0));
    s.pump(mail);
    assertThat(s.state("s5")).isEqualTo("COMPLETED");
    assertThat(s.effects("s5")).as("the work ran once; the re-ask got the stored reply")
        .containsOnlyOnce("reserve forward");
    assertThat(s.events("s5")).containsSubsequence("SENT reserve 1", "TIMED_OUT reserve 1", "RESENT reserve 1",
        "REPLIED reserve 1", "SENT debit 1").noneMatch(e -> e.startsWith("COMPENSAT"));
  }

  @Test
  void theDeadlineCompensatesAStepInFlightAndItsLateReplyIsRecorded() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("s6", "");
    s.deliver(mail.next().get(0));
    IncomingMessage lateReply = mail.next().get(0);
    clock.advance(OrderSaga.DEADLINE);
    assertThat(s.coordinator.poll()).isEqualTo(1);
    s.pump(mail);
    s.deliver(lateReply);
    assertThat(s.state("s6")).isEqualTo("COMPENSATED");
    assertThat(s.effects("s6")).containsExactly("reserve forward", "reserve compensate");
    assertThat(s.events("s6")).containsSubsequence("SENT reserve 1", "DEADLINE reserve 1", "COMPENSATING",
        "COMPENSATION_SENT reserve 1", "COMPENSATED reserve 1", "COMPENSATED", "LATE_REPLY reserve 1");
  }

  @Test
  void aCompensationBeforeItsForwardCommandIsEmptyAndTheLateCommandIsRefused() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("s7", "");
    IncomingMessage held = mail.next().get(0);
    clock.advance(OrderSaga.DEADLINE);
    s.coordinator.poll();
    s.pump(mail);
    assertThat(s.state("s7")).isEqualTo("COMPENSATED");
    assertThat(s.deliver(held)).isEqualTo(Outcome.PROCESSED);
    List<IncomingMessage> refusal = mail.next();
    assertThat(refusal).singleElement().satisfies(r -> {
      assertThat(r.header(SagaHeaders.OUTCOME)).isEqualTo("BUSINESS_FAILURE");
      assertThat(r.header(SagaHeaders.REASON)).isEqualTo("HANGING_REFUSED");
    });
    s.deliver(refusal.get(0));
    assertThat(s.effects("s7")).as("neither the forward work nor its undo ran").isEmpty();
    assertThat(s.list("SELECT direction || ' ' || outcome FROM converge_saga_branch WHERE saga_id = 's7' "
        + "ORDER BY direction")).containsExactly("compensate EMPTY", "forward PREVENTED");
    assertThat(s.events("s7")).endsWith("LATE_REPLY reserve 1");
    assertThat(s.state("s7")).isEqualTo("COMPENSATED");
  }

  @Test
  void aCompensationFailingThreeTimesEndsInATicket() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("s8", ",\"refuse\":\"debit\",\"failUndo\":\"reserve\"");
    s.pump(mail);
    for (int i = 0; i < 2; i++) {
      assertThat(s.state("s8")).isEqualTo("COMPENSATING");
      clock.advance(Duration.ofSeconds(1));
      assertThat(s.coordinator.poll()).isEqualTo(1);
      s.pump(mail);
    }
    assertThat(s.state("s8")).isEqualTo("COMPENSATION_FAILED");
    assertThat(s.events("s8")).filteredOn(e -> e.startsWith("COMPENSATION_SENT"))
        .containsExactly("COMPENSATION_SENT reserve 1", "COMPENSATION_SENT reserve 2", "COMPENSATION_SENT reserve 3");
    assertThat(s.events("s8")).endsWith("COMPENSATION_FAILED reserve 3", "TICKET reserve");
    assertThat(s.list("SELECT kind || ' ' || step || ' ' || status FROM converge_saga_ticket WHERE saga_id = 's8'"))
        .containsExactly("COMPENSATION_FAILED reserve OPEN");
    assertThat(s.effects("s8")).containsExactly("reserve forward");
    List<String> events = s.events("s8");
    clock.advance(Duration.ofHours(1));
    s.coordinator.poll();
    assertThat(s.events("s8")).as("automation stopped").isEqualTo(events);
    assertThat(s.state("s8")).isEqualTo("COMPENSATION_FAILED");
  }

  @Test
  void aStepsLatencyRunsFromItsFirstSendToItsReplyReAsksIncluded() throws Exception {
    List<String> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
    SagaMetrics recording = new SagaMetrics() {

      @Override
      public void stepReplied(String definition, String step, String direction, Duration latency) {
        latencies.add(step + " " + direction + " " + latency);
      }
    };
    OrderSaga s = saga(b -> b.metrics(recording));
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("lat-1", "");
    IncomingMessage command = mail.next().get(0);
    clock.advance(OrderSaga.STEP_TIMEOUT);
    assertThat(s.coordinator.poll()).as("timed out: asked again").isEqualTo(1);
    mail.next();
    clock.advance(Duration.ofSeconds(2));
    s.deliver(command);
    s.deliver(mail.next().get(0));
    assertThat(latencies).containsExactly("reserve forward PT7S");
    s.pump(mail);
    assertThat(s.state("lat-1")).isEqualTo("COMPLETED");
    assertThat(latencies).hasSize(3).endsWith("ship forward PT0S");
  }

  @Test
  void aSagaThatCannotBeDrivenIsSetAsideAndTheOthersGoOn() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("s9", "");
    s.deliver(mail.next().get(0));
    assertThat(only(mail.next(), SagaCoordinatorIT::reply)).as("the reply, lost").hasSize(1);
    // a saga of a definition this instance does not know (a newer release's, a removed one), due before s9
    Instant now = clock.instant();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO converge_saga"
            + " (id, tenant, definition, state, step, data, next_attempt_at, deadline, created_at, updated_at)"
            + " VALUES ('stranger', '', 'gone-v0', 'RUNNING', 0, '{}', ?, ?, ?, ?)")) {
      ps.setTimestamp(1, Timestamp.from(now.minusSeconds(60)));
      ps.setTimestamp(2, Timestamp.from(now.plus(Duration.ofDays(1))));
      ps.setTimestamp(3, Timestamp.from(now.minusSeconds(60)));
      ps.setTimestamp(4, Timestamp.from(now.minusSeconds(60)));
      ps.executeUpdate();
    }
    try {
      clock.advance(OrderSaga.STEP_TIMEOUT);
      Instant polledAt = clock.instant();
      assertThat(s.coordinator.poll()).as("the stranger set aside, s9 driven").isEqualTo(2);
      assertThat(s.events("s9")).as("s9 is not held up by the stranger").endsWith("RESENT reserve 1");
      assertThat(s.events("stranger")).containsExactly("SET_ASIDE 0");
      assertThat(s.one("SELECT last_error FROM converge_saga WHERE id = 'stranger'")).contains("gone-v0")
          .contains("does not know");
      assertThat(s.one("SELECT payload FROM converge_saga_event WHERE saga_id = 'stranger'")).contains("gone-v0");
      assertThat(s.one("SELECT state || ' ' || version FROM converge_saga WHERE id = 'stranger'"))
          .isEqualTo("RUNNING 1");
      try (Connection c = ds.getConnection();
          PreparedStatement ps = c.prepareStatement(
              "SELECT next_attempt_at FROM converge_saga WHERE id = 'stranger'")) {
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getTimestamp(1).toInstant()).isEqualTo(polledAt.plus(Duration.ofSeconds(30)));
        }
      }
      assertThat(s.coordinator.poll()).as("not claimed again at once").isZero();
      s.pump(mail);
      assertThat(s.state("s9")).isEqualTo("COMPLETED");
      clock.advance(Duration.ofSeconds(30));
      assertThat(s.coordinator.poll()).as("tried again later").isEqualTo(1);
      assertThat(s.events("stranger")).as("the same error again: no second event, the table does not grow")
          .containsExactly("SET_ASIDE 0");
      assertThat(s.one("SELECT version FROM converge_saga WHERE id = 'stranger'")).isEqualTo("2");
    } finally {
      try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
        st.executeUpdate("DELETE FROM converge_saga_event WHERE saga_id = 'stranger'");
        st.executeUpdate("DELETE FROM converge_saga WHERE id = 'stranger'");
      }
    }
  }

  @Test
  void twoCoordinatorsRacingOnTheSameDueSagasDriveEachOnce() throws Exception {
    OrderSaga s = saga();
    OrderSaga rival = new OrderSaga(ds, s.producer, "", clock, b -> b.batchSize(7));
    Mailbox mail = Mailbox.fromNow(s.ds);
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      ids.add("race-" + i);
      s.start("race-" + i, "");
    }
    for (IncomingMessage command : mail.next()) {
      s.deliver(command);
    }
    assertThat(only(mail.next(), SagaCoordinatorIT::reply)).as("every reply lost").hasSize(40);
    clock.advance(OrderSaga.STEP_TIMEOUT);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<Integer>> driven = new ArrayList<>();
      for (SagaCoordinator c : List.of(s.coordinator, rival.coordinator)) {
        driven.add(pool.submit(() -> {
          int n = 0;
          for (int k; (k = c.poll()) > 0;) {
            n += k;
          }
          return n;
        }));
      }
      assertThat(driven.get(0).get() + driven.get(1).get()).isEqualTo(40);
    } finally {
      pool.shutdown();
    }
    assertThat(mail.next()).as("one re-sent command per saga").hasSize(40)
        .extracting(m -> m.header(SagaHeaders.SAGA_ID)).doesNotHaveDuplicates();
    assertThat(s.count("SELECT count(*) FROM converge_saga_event WHERE saga_id LIKE 'race-%' AND kind = 'RESENT'"))
        .isEqualTo(40);
    assertThat(s.count("SELECT count(*) FROM converge_saga_event WHERE saga_id LIKE 'race-%' AND kind = 'TIMED_OUT'"))
        .isEqualTo(40);
    assertThat(s.count("SELECT count(*) FROM converge_saga WHERE id LIKE 'race-%' AND version = 2 AND sends = 2"))
        .isEqualTo(40);
  }

  @Test
  void compensationsKeepToTheirParticipantsRate() throws Exception {
    AtomicLong nanos = new AtomicLong();
    // a schema of its own: the other tests' sagas must not take the participant's tokens
    DataSource own = ConvergePostgres.shared().newSchema("saga_rate");
    OrderSaga.migrate(own);
    OrderSaga s = saga(own, b -> b.nanoTime(nanos::get).batchSize(1000).compensationRate("inventory", 40, 40));
    // 200 sagas whose first command is out; at their deadline each compensates it: 200 compensations at once
    s.producer.inTransaction(tx -> {
      for (int i = 0; i < 200; i++) {
        s.coordinator.start(tx, s.definition, "rate-" + i, "{}");
      }
      return null;
    });
    clock.advance(OrderSaga.DEADLINE);
    String sent = "SELECT count(*) FROM converge_saga_event WHERE saga_id LIKE 'rate-%' AND kind = 'COMPENSATION_SENT'";
    assertThat(s.coordinator.poll()).isEqualTo(200);
    assertThat(s.count(sent)).as("the burst").isEqualTo(40);
    long before = 40;
    for (int round = 1; round <= 4; round++) {
      nanos.addAndGet(1_000_000_000L);
      clock.advance(Duration.ofSeconds(1));
      s.coordinator.poll();
      assertThat(s.count(sent) - before).as("round %s: 40/s for a second", round).isEqualTo(40);
      before = s.count(sent);
    }
    assertThat(s.count("SELECT count(*) FROM converge_saga_event WHERE saga_id LIKE 'rate-%' AND kind = "
        + "'COMPENSATION_SENT' GROUP BY saga_id HAVING count(*) > 1 UNION ALL SELECT 0")).as("once each").isZero();
  }

  @Test
  void aCompensationWhoseForwardWorkRanButHasNoUndoStopsTheSagaWithAnAnomalyTicket() throws Exception {
    OrderSaga s = saga(ds, b -> {
    }, Set.of("reserve"));
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("u1", ",\"refuse\":\"debit\"");
    s.pump(mail);
    assertThat(s.state("u1")).as("no undo ran: the money was not returned").isEqualTo("STOPPED");
    assertThat(s.effects("u1")).containsExactly("reserve forward");
    assertThat(s.events("u1")).containsSubsequence("FAILED debit 1", "COMPENSATING", "COMPENSATION_SENT reserve 1",
        "COMPENSATION_REPLIED reserve 1", "STOPPED reserve 1", "TICKET reserve")
        .endsWith("STOPPED reserve 1", "TICKET reserve").noneMatch(e -> e.startsWith("COMPENSATED"));
    assertThat(s.list("SELECT kind || ' ' || step || ' ' || status FROM converge_saga_ticket WHERE saga_id = 'u1'"))
        .containsExactly("ANOMALY reserve OPEN");
    assertThat(s.one("SELECT reason FROM converge_saga_ticket WHERE saga_id = 'u1'")).contains("NO_UNDO")
        .contains("nothing was undone");
    assertThat(s.list("SELECT direction || ' ' || outcome FROM converge_saga_branch WHERE saga_id = 'u1' AND "
        + "step = 'reserve'")).as("nothing stored: once an undo is registered, asking again runs it")
        .containsExactly("forward SUCCESS");
    // the forward work never ran: the compensation without an undo is empty, as before
    s.start("u2", "");
    assertThat(mail.next()).as("the reserve command, held").hasSize(1);
    clock.advance(OrderSaga.DEADLINE);
    pollAll(s);
    s.pump(mail);
    assertThat(s.state("u2")).isEqualTo("COMPENSATED");
    assertThat(s.list("SELECT direction || ' ' || outcome FROM converge_saga_branch WHERE saga_id = 'u2' "
        + "ORDER BY direction")).containsExactly("compensate EMPTY", "forward PREVENTED");
  }

  @Test
  void aCompensationReplyTimeoutSendsTheSameCompensationAgain() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("c1", ",\"refuse\":\"debit\"");
    List<IncomingMessage> held = new ArrayList<>();
    pumpHolding(s, mail, m -> m.topic().endsWith("-comp"), held);
    assertThat(held).as("the compensation of reserve, lost").hasSize(1);
    clock.advance(OrderSaga.STEP_TIMEOUT);
    pollAll(s);
    List<IncomingMessage> again = only(mail.next(), m -> "c1".equals(m.header(SagaHeaders.SAGA_ID)));
    assertThat(again).singleElement().satisfies(m -> {
      assertThat(m.topic()).isEqualTo("inventory-comp");
      assertThat(m.header(SagaHeaders.COMMAND_ID)).as("the same command")
          .isEqualTo(held.get(0).header(SagaHeaders.COMMAND_ID));
    });
    s.deliver(again.get(0));
    s.pump(mail);
    assertThat(s.state("c1")).isEqualTo("COMPENSATED");
    s.deliver(held.get(0));
    s.pump(mail);
    assertThat(s.effects("c1")).as("undone once; the lost command got the stored reply")
        .containsExactly("reserve forward", "reserve compensate");
    assertThat(s.events("c1")).containsSubsequence("COMPENSATION_SENT reserve 1", "TIMED_OUT reserve 1",
        "COMPENSATION_SENT reserve 1", "COMPENSATION_REPLIED reserve 1", "COMPENSATED reserve 1", "COMPENSATED")
        .endsWith("DUPLICATE_REPLY reserve 1");
  }

  @Test
  void aLateSuccessfulCompensationAfterTheTicketIsRecordedAndNotedOnTheTicket() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("c2", ",\"refuse\":\"ship\"");
    List<IncomingMessage> held = new ArrayList<>();
    pumpHolding(s, mail, m -> m.topic().equals("account-comp"), held);
    for (int i = 0; i < 3; i++) {
      assertThat(s.state("c2")).isEqualTo("COMPENSATING");
      clock.advance(OrderSaga.STEP_TIMEOUT);
      pollAll(s);
      pumpHolding(s, mail, m -> m.topic().equals("account-comp"), held);
    }
    assertThat(s.state("c2")).isEqualTo("COMPENSATION_FAILED");
    assertThat(held).as("three sends of one command, every one lost").hasSize(3)
        .extracting(m -> m.header(SagaHeaders.COMMAND_ID)).containsOnly(held.get(0).header(SagaHeaders.COMMAND_ID));
    assertThat(s.events("c2")).endsWith("TIMED_OUT debit 1", "COMPENSATION_FAILED debit 1", "TICKET debit");
    // the participant did undo it, its reply comes after the ticket
    s.deliver(held.get(0));
    s.pump(mail);
    assertThat(s.effects("c2")).containsExactly("reserve forward", "debit forward", "debit compensate");
    assertThat(s.state("c2")).as("final: a person finishes it").isEqualTo("COMPENSATION_FAILED");
    assertThat(s.events("c2")).endsWith("TICKET debit", "COMPENSATION_REPLIED debit 1", "COMPENSATED debit 1",
        "TICKET_NOTED debit");
    assertThat(s.list("SELECT kind || ' ' || step || ' ' || status FROM converge_saga_ticket WHERE saga_id = 'c2'"))
        .containsExactly("COMPENSATION_FAILED debit OPEN");
    assertThat(s.one("SELECT reason FROM converge_saga_ticket WHERE saga_id = 'c2'"))
        .startsWith("compensation of step 'debit' failed 3 times").contains("'debit' (attempt 1) was replied SUCCESS")
        .endsWith("steps still to compensate: reserve");
    // the other sends' replies are duplicates: noted once
    s.deliver(held.get(1));
    s.deliver(held.get(2));
    s.pump(mail);
    assertThat(s.events("c2")).containsOnlyOnce("TICKET_NOTED debit", "COMPENSATED debit 1")
        .endsWith("DUPLICATE_REPLY debit 1", "DUPLICATE_REPLY debit 1");
    assertThat(s.effects("c2")).containsOnlyOnce("debit compensate");
  }

  @Test
  void aLateSuccessfulCompensationAfterItsTicketWasResolvedOpensAnAnomalyTicket() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("c3", ",\"refuse\":\"ship\"");
    List<IncomingMessage> held = new ArrayList<>();
    pumpHolding(s, mail, m -> m.topic().equals("account-comp"), held);
    for (int i = 0; i < 3; i++) {
      clock.advance(OrderSaga.STEP_TIMEOUT);
      pollAll(s);
      pumpHolding(s, mail, m -> m.topic().equals("account-comp"), held);
    }
    assertThat(s.state("c3")).isEqualTo("COMPENSATION_FAILED");
    // a person refunded by hand and resolved the ticket; then the participant's own undo replies SUCCESS
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.executeUpdate("UPDATE converge_saga_ticket SET status = 'RESOLVED', resolved_by = 'ops', resolution = "
          + "'refunded by hand' WHERE saga_id = 'c3'");
    }
    s.deliver(held.get(0));
    s.pump(mail);
    assertThat(s.list("SELECT kind || ' ' || step || ' ' || status FROM converge_saga_ticket WHERE saga_id = 'c3'"
        + " ORDER BY id")).as("the money may have gone back twice: a person must look again")
        .containsExactly("COMPENSATION_FAILED debit RESOLVED", "ANOMALY debit OPEN");
    assertThat(s.one("SELECT reason FROM converge_saga_ticket WHERE saga_id = 'c3' AND status = 'OPEN'"))
        .contains("was replied SUCCESS").contains("undone twice");
    assertThat(s.one("SELECT resolution FROM converge_saga_ticket WHERE saga_id = 'c3' AND status = 'RESOLVED'"))
        .isEqualTo("refunded by hand");
    assertThat(s.events("c3")).endsWith("COMPENSATION_REPLIED debit 1", "COMPENSATED debit 1", "TICKET debit")
        .doesNotContain("TICKET_NOTED debit");
  }

  @Test
  void aTechnicalFailureIsRetriedWithANewAttemptAndTheStepSucceeds() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("r1", ",\"failOnce\":\"debit\"");
    List<IncomingMessage> delivered = new ArrayList<>();
    pumpHolding(s, mail, m -> !delivered.add(m), new ArrayList<>()); // every message delivered, and kept
    assertThat(s.state("r1")).isEqualTo("RUNNING");
    assertThat(s.events("r1")).endsWith("REPLIED debit 1", "RETRIED debit 1");
    assertThat(s.one("SELECT payload FROM converge_saga_event WHERE saga_id = 'r1' AND kind = 'REPLIED'"
        + " AND step = 'debit'")).as("the reply names the exception's class, never its message")
        .contains("java.lang.IllegalStateException").doesNotContain("failed once");
    assertThat(s.one("SELECT attempt || ' ' || awaiting FROM converge_saga WHERE id = 'r1'"))
        .as("the next attempt, after its backoff").isEqualTo("2 false");
    clock.advance(Duration.ofSeconds(1));
    pollAll(s);
    List<IncomingMessage> retry = only(mail.next(), m -> "r1".equals(m.header(SagaHeaders.SAGA_ID)));
    assertThat(retry).singleElement().satisfies(m -> {
      assertThat(attemptOf(m)).isEqualTo("debit forward 2");
      assertThat(m.header(SagaHeaders.COMMAND_ID)).as("a new command").isNotEqualTo(
          only(delivered, c -> "debit forward 1".equals(attemptOf(c))).get(0).header(SagaHeaders.COMMAND_ID));
    });
    s.deliver(retry.get(0));
    s.pump(mail);
    assertThat(s.state("r1")).isEqualTo("COMPLETED");
    assertThat(s.effects("r1")).containsExactly("reserve forward", "debit forward", "ship forward",
        "mark-paid forward");
    assertThat(s.events("r1")).containsSubsequence("SENT debit 1", "REPLIED debit 1", "RETRIED debit 1",
        "SENT debit 2", "REPLIED debit 2", "SENT ship 1", "COMPLETED").noneMatch(e -> e.startsWith("COMPENSAT"));
  }

  @Test
  void anAnomalyReplyStopsTheSagaWithATicketAndCompensatesNothing() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("a1", "");
    s.deliver(mail.next().get(0));
    s.deliver(mail.next().get(0));
    IncomingMessage debit = mail.next().get(0);
    assertThat(attemptOf(debit)).isEqualTo("debit forward 1");
    assertThat(s.deliver(replyTo(debit, "ANOMALY", "AMOUNT_MISMATCH"))).isEqualTo(Outcome.PROCESSED);
    assertThat(s.state("a1")).isEqualTo("STOPPED");
    assertThat(s.events("a1")).endsWith("REPLIED debit 1", "STOPPED debit 1", "TICKET debit")
        .noneMatch(e -> e.startsWith("COMPENSAT"));
    assertThat(mail.next()).as("no command, no compensation").isEmpty();
    assertThat(s.list("SELECT kind || ' ' || step || ' ' || status FROM converge_saga_ticket WHERE saga_id = 'a1'"))
        .containsExactly("ANOMALY debit OPEN");
    assertThat(s.one("SELECT reason FROM converge_saga_ticket WHERE saga_id = 'a1'")).contains("AMOUNT_MISMATCH")
        .contains("12.00 EUR");
    // an outcome the classifier does not know is an anomaly too, never a guess
    s.start("a2", "");
    assertThat(s.deliver(replyTo(mail.next().get(0), "MAYBE", null))).isEqualTo(Outcome.PROCESSED);
    assertThat(s.state("a2")).isEqualTo("STOPPED");
    List<String> events = s.events("a1");
    clock.advance(Duration.ofHours(1));
    pollAll(s);
    s.pump(mail);
    assertThat(s.events("a1")).as("automation stopped").isEqualTo(events);
    assertThat(s.effects("a1")).containsExactly("reserve forward");
  }

  @Test
  void aLocalStepThatRefusesCompensatesTheStepsBeforeIt() throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
        .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build();
    open.add(sdk);
    Tracing tracing = OpenTelemetryTracing.of(sdk);
    OrderSaga s = saga(b -> b.tracing(tracing));
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("l1", ",\"refuse\":\"mark-paid\"");
    s.pump(mail);
    assertThat(s.state("l1")).isEqualTo("COMPENSATED");
    assertThat(s.effects("l1")).containsExactly("reserve forward", "debit forward", "ship forward",
        "ship compensate", "debit compensate", "reserve compensate");
    assertThat(s.events("l1")).containsSubsequence("REPLIED ship 1", "FAILED mark-paid 1",
        "COMPENSATION_SENT ship 1", "COMPENSATED ship 1", "COMPENSATED debit 1", "COMPENSATED reserve 1",
        "COMPENSATED").doesNotContain("LOCAL_DONE mark-paid 1");
    // the refusal is recorded on the local step's span, while it is open: an error, with the exception
    SpanData refused = exporter.getFinishedSpanItems().stream()
        .filter(d -> d.getName().equals("saga step mark-paid")).findFirst().orElseThrow();
    assertThat(refused.getStatus().getStatusCode()).isEqualTo(io.opentelemetry.api.trace.StatusCode.ERROR);
    assertThat(refused.getEvents()).anyMatch(e -> e.getName().equals("exception"));
    assertThat(refused.getAttributes().get(AttributeKey.stringKey("converge.saga.id"))).isEqualTo("l1");
  }

  @Test
  void aLocalStepThatThrowsRollsItsTransitionBackAndTheSagaWaitsForItsDeadline() throws Exception {
    OrderSaga s = saga();
    Mailbox mail = Mailbox.fromNow(s.ds);
    s.start("l2", ",\"failLocal\":\"mark-paid\"");
    List<IncomingMessage> replies = new ArrayList<>();
    pumpHolding(s, mail, m -> reply(m) && "ship".equals(m.header(SagaHeaders.STEP)), replies);
    assertThat(replies).hasSize(1);
    assertThat(s.deliver(replies.get(0))).as("retried by the reply handler's policy, then parked")
        .isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(s.state("l2")).isEqualTo("RUNNING");
    assertThat(s.events("l2")).as("the whole transition rolled back, its REPLIED event too")
        .endsWith("SENT ship 1");
    assertThat(s.effects("l2")).doesNotContain("mark-paid forward");
    clock.advance(OrderSaga.STEP_TIMEOUT);
    pollAll(s);
    s.pump(mail);
    assertThat(s.events("l2")).as("asked again, the same failure").endsWith("TIMED_OUT ship 1", "RESENT ship 1");
    clock.advance(OrderSaga.DEADLINE);
    pollAll(s);
    s.pump(mail);
    assertThat(s.state("l2")).isEqualTo("COMPENSATED");
    assertThat(s.effects("l2")).containsExactly("reserve forward", "debit forward", "ship forward",
        "ship compensate", "debit compensate", "reserve compensate");
    assertThat(s.events("l2")).containsSubsequence("DEADLINE ship 1", "COMPENSATION_SENT ship 1",
        "COMPENSATED ship 1", "COMPENSATED reserve 1", "COMPENSATED").doesNotContain("LOCAL_DONE mark-paid 1");
  }
}
