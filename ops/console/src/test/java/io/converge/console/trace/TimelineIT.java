package io.converge.console.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.console.inspect.Inspector;
import io.converge.console.web.ConsoleContext;
import io.converge.console.web.ConsoleRequest;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.StateMachine;
import io.converge.outbox.OutboxBackend;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.saga.SagaCodec;
import io.converge.saga.SagaCoordinator;
import io.converge.saga.SagaDefinition;
import io.converge.saga.SagaHeaders;
import io.converge.saga.SagaParticipant;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A real unit of work on the embedded PostgreSQL: an order placed through a {@link StateMachine} transition and
 * a message committed with it into the outbox ({@link TxnProducer} on the outbox backend); the polling
 * {@link OutboxRelay} publishes it to a sink that delivers each message twice to an {@link IdempotentHandler}
 * (a broker's redelivery), whose handler moves the order to PAID. The timeline of the order, of the message and
 * of the Idempotency-Key the order was placed with holds, in time order, the request, both transitions, the
 * outbox row written and published, and one dedup outcome: the duplicate delivery took no effect. The console's
 * trace page renders it.
 */
class TimelineIT {

  enum OrderState {
    NEW, PLACED, PAID
  }

  private static final StateMachine<OrderState> ORDERS = StateMachine.builder("orders", OrderState.class)
      .allow(OrderState.NEW, OrderState.PLACED).allow(OrderState.PLACED, OrderState.PAID).build();

  private static DataSource ds;

  @BeforeAll
  static void schema() throws Exception {
    ds = ConvergePostgres.shared().newSchema("trace");
    for (String module : List.of("producer", "outbox", "consumer", "idempotency")) {
      Migrations.apply(ds, module);
    }
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE orders (id text PRIMARY KEY, state text NOT NULL, version bigint NOT NULL DEFAULT 0)");
    }
  }

  @Test
  void aPaymentsTimelineHoldsEverythingInTimeOrderAndTheDuplicateTookNoEffect() throws Exception {
    String orderId = "order-" + UUID.randomUUID();
    String idemKey = UUID.randomUUID().toString();
    // what the Idempotency-Key filter records for the request that placed the order (its own tests prove it does)
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(
            """
                INSERT INTO converge_idempotency_key (tenant, idem_key, fingerprint, method, path, status, lease_owner,
                  leased_until, expected_ms, claimed_at, expires_at, completed_at, response_status, response_body, day)
                VALUES ('default', ?, repeat('0', 64), 'POST', '/orders', 'COMPLETED', gen_random_uuid(), now(), 100,
                  now() - interval '1 second', now() + interval '1 day', now(), 201, convert_to(?, 'UTF8'), DATE '1970-01-01')""")) {
      ps.setString(1, idemKey);
      ps.setString(2, "{\"order\":\"" + orderId + "\"}");
      ps.executeUpdate();
    }
    TxnProducer producer = TxnProducer.builder().group("shop").dataSource(ds).backend(OutboxBackend.outbox()).build();
    String messageId = producer.inTransaction(tx -> {
      try (
          PreparedStatement ps = tx.connection().prepareStatement("INSERT INTO orders (id, state) VALUES (?, 'NEW')")) {
        ps.setString(1, orderId);
        ps.executeUpdate();
      }
      ORDERS.transition(tx.connection(), orderId, OrderState.PLACED,
          new StateMachine.Cause("POST /orders", idemKey, null));
      return tx.publish(OutgoingMessage.builder("orders").key(orderId)
          .payload(orderId.getBytes(java.nio.charset.StandardCharsets.UTF_8)).build());
    });

    IdempotentHandler payments = IdempotentHandler.builder().group("payments").dataSource(ds)
        .handler((c, m) -> ORDERS.transition(c, m.brokerKey(), OrderState.PAID)).build();
    List<Outcome> outcomes = new CopyOnWriteArrayList<>();
    try (OutboxRelay relay = OutboxRelay.builder().dataSource(ds).sink(twice(payments, outcomes))
        .idlePoll(Duration.ofMillis(20), Duration.ofMillis(100)).build()) {
      relay.start();
      await().atMost(Duration.ofSeconds(10)).until(() -> outcomes.size() == 2);
    }
    assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.DUPLICATE);

    List<String> expected = List.of(
        "converge_idempotency_key " + idemKey + " request POST /orders claimed",
        "converge_idempotency_key " + idemKey + " response 201 stored",
        "converge_state_transition " + orderId + " orders NEW -> PLACED (version 1)",
        "converge_outbox " + messageId + " outbox row",
        "converge_outbox " + messageId + " outbox row",
        "converge_state_transition " + orderId + " orders PLACED -> PAID (version 2), final",
        "converge_dedup " + messageId + " consumer payments: PROCESSED");
    for (String id : List.of(orderId, messageId, idemKey)) {
      List<TimelineEvent> events = Timeline.of(ds).trace(id);
      assertThat(events).as("trace %s: %s", id, events).hasSize(expected.size());
      assertThat(events).isSortedAccordingTo(java.util.Comparator.comparing(TimelineEvent::at));
      assertThat(events).map(e -> e.source() + " " + e.subject() + " " + e.what())
          .as("trace %s", id).allSatisfy(line -> assertThat(expected).anyMatch(line::startsWith))
          .anyMatch(line -> line.endsWith("written")).anyMatch(line -> line.endsWith("published"));
      assertThat(events.subList(0, 3)).map(TimelineEvent::what).containsExactly("request POST /orders claimed",
          "response 201 stored", "orders NEW -> PLACED (version 1)");
      assertThat(events.get(2).details()).containsEntry("cause", "POST /orders").containsEntry("message", idemKey);
      TimelineEvent paid = events.stream().filter(e -> e.what().contains("-> PAID")).findFirst().orElseThrow();
      assertThat(paid.details()).containsEntry("cause", "consumer payments").containsEntry("message", messageId);
      TimelineEvent published = events.stream().filter(e -> e.what().endsWith("published")).findFirst().orElseThrow();
      assertThat(published.at()).isBeforeOrEqualTo(paid.at());
    }
    String page = new TracePage().render(new ConsoleRequest("GET", "/trace", Map.of("id", orderId), null),
        new ConsoleContext(ds, Inspector.of(ds), "/console"));
    assertThat(page).contains("7 events for <code>" + orderId + "</code>").contains("orders NEW -&gt; PLACED")
        .contains("consumer payments: PROCESSED").contains("href=\"/console/trace?id=" + messageId + "\"");
    assertThat(Timeline.of(ds).trace("no-such-id")).isEmpty();
    assertThatThrownBy(() -> Timeline.of(ds).trace(" ")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("trace.id");
  }

  /**
   * A Pulsar unit not confirmed yet is on its messages' timelines, whichever table logged it: one row of
   * {@code converge_pulsar_unit} (pulsar migration V4), or the tables an earlier version wrote.
   */
  @Test
  void anUnconfirmedPulsarTransactionIsOnItsMessagesTimelinesInEitherLayout() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("trace_pulsar");
    Migrations.apply(ds, "producer");
    Migrations.apply(ds, "pulsar");
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(
          """
              INSERT INTO converge_pulsar_unit (txn_most, txn_least, producer_group, deadline, message_ids, topics, msg_keys,
                                                properties, payloads)
              VALUES (3, 30, 'pg', now(), '{pm-a,pm-b}', '{refunds,ledger}', '{k,k}', '{NULL,NULL}',
                      ARRAY['\\x00'::bytea, '\\x00'])""");
      s.execute(
          "INSERT INTO converge_pulsar_txn (txn_most, txn_least, producer_group, deadline) VALUES (1, 10, 'pg', now())");
      s.execute("""
          INSERT INTO converge_pulsar_txn_message (message_id, txn_most, txn_least, topic, properties, payload)
          VALUES ('pm-old', 1, 10, 'ledger', '{}', '\\x00')""");
    }
    Timeline timeline = Timeline.of(ds);
    assertThat(timeline.trace("pm-b")).singleElement().satisfies(e -> {
      assertThat(e.source()).isEqualTo("converge_pulsar_logged");
      assertThat(e.subject()).isEqualTo("pm-b");
      assertThat(e.what()).isEqualTo("Pulsar transaction (3,30) open");
      assertThat(e.details()).containsEntry("topic", "ledger").containsEntry("group", "pg");
    });
    assertThat(timeline.trace("pm-old")).singleElement()
        .satisfies(e -> assertThat(e.what()).isEqualTo("Pulsar transaction (1,10) open"));
  }

  /**
   * A one-step saga on the outbox backend, its command and its reply delivered by hand from the outbox rows (the
   * command twice: a redelivery): the saga's timeline holds its steps, the participant's stored answer and both
   * dedup outcomes, the duplicate leaving none, and the command's message id leads to the same timeline.
   */
  @Test
  void aSagasTimelineHoldsItsStepsItsParticipantsAnswerAndTheDedupOfItsMessages() throws Exception {
    // a schema of its own: the other test's relay would deliver this one's outbox rows
    DataSource ds = ConvergePostgres.shared().newSchema("trace_saga");
    for (String module : List.of("producer", "outbox", "consumer", "saga")) {
      Migrations.apply(ds, module);
    }
    String sagaId = "order-" + UUID.randomUUID();
    TxnProducer producer = TxnProducer.builder().group("trace-saga").dataSource(ds).backend(OutboxBackend.outbox())
        .build();
    SagaDefinition<String> order = SagaDefinition.builder("trace-order", SagaCodec.json())
        .remote("debit", s -> s.participant("account").command("trace-account-cmd", SagaCodec::utf8)
            .compensation("trace-account-comp", SagaCodec::utf8))
        .build();
    SagaParticipant account = SagaParticipant.builder("account").producer(producer)
        .step("debit", (c, m) -> "{\"debited\":5}".getBytes(java.nio.charset.StandardCharsets.UTF_8))
        .compensation("debit", (c, m) -> new byte[0]).build();
    long cursor = outboxSeq(ds, -1, null);
    try (SagaCoordinator coordinator = SagaCoordinator.builder().producer(producer).definitions(order)
        .replyTopic("trace-saga-replies").build()) {
      assertThat(coordinator.start(order, sagaId, "{\"amount\":5}")).isTrue();
      List<IncomingMessage> commands = new ArrayList<>();
      cursor = outboxSeq(ds, cursor, commands);
      assertThat(commands).singleElement().satisfies(m -> assertThat(m.topic()).isEqualTo("trace-account-cmd"));
      IdempotentHandler accountHandler = account.handler("account");
      assertThat(accountHandler.handle(commands.get(0))).isEqualTo(Outcome.PROCESSED);
      assertThat(accountHandler.handle(commands.get(0))).isEqualTo(Outcome.DUPLICATE);
      List<IncomingMessage> replies = new ArrayList<>();
      outboxSeq(ds, cursor, replies);
      assertThat(replies).singleElement().satisfies(m -> assertThat(m.header(SagaHeaders.SAGA_ID)).isEqualTo(sagaId));
      assertThat(coordinator.replyHandler().handle(replies.get(0))).isEqualTo(Outcome.PROCESSED);
    }
    String command = command(ds, sagaId);
    List<String> expected = List.of("outbox row", "saga STARTED", "saga SENT debit (attempt 1)",
        "participant account debit forward: SUCCESS", "consumer account: PROCESSED", "saga REPLIED debit (attempt 1)",
        "outbox row", "consumer ", "saga COMPLETED");
    for (String id : List.of(sagaId, command)) {
      List<TimelineEvent> events = Timeline.of(ds).trace(id);
      assertThat(events).as("trace %s: %s", id, events).hasSize(expected.size())
          .isSortedAccordingTo(java.util.Comparator.comparing(TimelineEvent::at));
      for (String what : expected) {
        assertThat(events).as("trace %s", id).map(TimelineEvent::what).anyMatch(w -> w.startsWith(what));
      }
      assertThat(events).filteredOn(e -> e.source().equals("converge_dedup")).hasSize(2)
          .allSatisfy(e -> assertThat(e.what()).endsWith(": PROCESSED"));
      assertThat(events).filteredOn(e -> e.source().equals("converge_outbox")).map(TimelineEvent::what)
          .containsExactlyInAnyOrder("outbox row 1 written", "outbox row 2 written");
      assertThat(events.get(events.size() - 1).what()).isEqualTo("saga COMPLETED");
      TimelineEvent answer = events.stream().filter(e -> e.source().equals("converge_saga_branch")).findFirst()
          .orElseThrow();
      assertThat(answer.details()).containsEntry("reply", "{\"debited\":5}");
    }
  }

  /** The envelope id of the saga's command, as its SENT event records it. */
  private static String command(DataSource ds, String sagaId) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT message_id FROM converge_saga_event WHERE saga_id = ? AND kind = 'SENT'")) {
      ps.setString(1, sagaId);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1);
      }
    }
  }

  /**
   * The outbox rows after {@code after} as incoming messages (added to {@code into} unless null), as a relay would
   * deliver them; returns the last row's sequence ({@code after} when none).
   */
  private static long outboxSeq(DataSource ds, long after, List<IncomingMessage> into) throws Exception {
    long last = after;
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT seq, topic, header_names, header_values, payload FROM converge_outbox WHERE seq > ? ORDER BY seq")) {
      ps.setLong(1, after);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          last = rs.getLong(1);
          if (into != null) {
            IncomingMessage.Builder b = IncomingMessage.builder().topic(rs.getString(2)).payload(rs.getBytes(5));
            String[] names = (String[]) rs.getArray(3).getArray();
            String[] values = (String[]) rs.getArray(4).getArray();
            for (int i = 0; i < names.length; i++) {
              b.header(names[i], values[i]);
            }
            into.add(b.build());
          }
        }
      }
    }
    return last;
  }

  /** A sink that delivers every record twice, as a broker may: the second delivery is a redelivery. */
  private static OutboxSink twice(IdempotentHandler handler, List<Outcome> outcomes) {
    return new OutboxSink() {

      @Override
      public String name() {
        return "deliver-twice";
      }

      @Override
      public void send(OutboxRecord r) {
        for (int delivery = 1; delivery <= 2; delivery++) {
          outcomes.add(handler.handle(IncomingMessage.builder().topic(r.topic()).headers(r.headers())
              .payload(r.payload()).brokerKey(r.key()).deliveryCount(delivery).build()));
        }
      }

      @Override
      public void close() {
      }
    };
  }
}
