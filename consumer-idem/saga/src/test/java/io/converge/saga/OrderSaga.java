package io.converge.saga;

import io.converge.consumer.BusinessException;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.core.Migrations;
import io.converge.producer.TxnProducer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The test saga, the article's order flow: reserve stock (inventory), debit (account), ship (shipping), all three
 * remote and compensable, then a local "mark-paid". The saga's data is a JSON text; a participant refuses its step
 * when the data holds {@code "refuse":"<step>"}, fails its step's first run (a technical failure) when it holds
 * {@code "failOnce":"<step>"} and fails its compensation when it holds {@code "failUndo":"<step>"}; "mark-paid"
 * refuses on {@code "refuse":"mark-paid"} and throws an {@link IllegalStateException} on
 * {@code "failLocal":"mark-paid"}. Every run of a participant's work leaves a row in {@code effects}. Participants
 * and coordinator share one schema.
 */
final class OrderSaga {

  static final String REPLIES = "saga-replies";
  static final Duration STEP_TIMEOUT = Duration.ofSeconds(5);
  static final Duration DEADLINE = Duration.ofMinutes(1);

  final DataSource ds;
  final TxnProducer producer;
  final SagaDefinition<String> definition;
  final SagaCoordinator coordinator;
  final Map<String, IdempotentHandler> participants;
  private final Set<String> withoutUndo;
  private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();

  OrderSaga(DataSource ds, TxnProducer producer, String topicPrefix, MutableClock clock,
      Consumer<SagaCoordinatorBuilder> settings) {
    this(ds, producer, topicPrefix, clock, settings, Set.of());
  }

  /** As above, with participants that register no compensation for the steps {@code withoutUndo}. */
  OrderSaga(DataSource ds, TxnProducer producer, String topicPrefix, MutableClock clock,
      Consumer<SagaCoordinatorBuilder> settings, Set<String> withoutUndo) {
    this(ds, producer, topicPrefix, clock, settings, withoutUndo, STEP_TIMEOUT, DEADLINE);
  }

  /** As above, with each step's (and compensation's) timeout and the saga's deadline. */
  OrderSaga(DataSource ds, TxnProducer producer, String topicPrefix, MutableClock clock,
      Consumer<SagaCoordinatorBuilder> settings, Set<String> withoutUndo, Duration stepTimeout, Duration deadline) {
    this.ds = ds;
    this.withoutUndo = withoutUndo;
    this.producer = producer;
    this.definition = SagaDefinition.builder("order", SagaCodec.json())
        .remote("reserve", remote("inventory", topicPrefix, stepTimeout))
        .remote("debit", remote("account", topicPrefix, stepTimeout))
        .remote("ship", remote("shipping", topicPrefix, stepTimeout))
        .local("mark-paid", (c, d) -> {
          if (d.replace(" ", "").contains("\"refuse\":\"mark-paid\"")) {
            throw new BusinessException("REFUSED", "mark-paid refused");
          }
          if (d.replace(" ", "").contains("\"failLocal\":\"mark-paid\"")) {
            throw new IllegalStateException("mark-paid failed");
          }
          effect(c, d, "mark-paid", "forward");
          return d;
        })
        .deadline(deadline)
        .compensationTimeout(stepTimeout)
        .build();
    SagaCoordinatorBuilder b = SagaCoordinator.builder().producer(producer).definitions(definition)
        .replyTopic(topicPrefix + REPLIES).replyPolicy(io.converge.consumer.FailurePolicy.defaults()
            .withBackoff(Duration.ofMillis(5), Duration.ofMillis(20)));
    if (clock != null) {
      b.clock(clock);
    }
    settings.accept(b);
    this.coordinator = b.build();
    this.participants = Map.of(
        topicPrefix + "inventory-cmd", participant("inventory", "reserve").handler("inventory"),
        topicPrefix + "inventory-comp", participant("inventory", "reserve").handler("inventory-comp"),
        topicPrefix + "account-cmd", participant("account", "debit").handler("account"),
        topicPrefix + "account-comp", participant("account", "debit").handler("account-comp"),
        topicPrefix + "shipping-cmd", participant("shipping", "ship").handler("shipping"),
        topicPrefix + "shipping-comp", participant("shipping", "ship").handler("shipping-comp"));
  }

  /** The schema: producer, outbox, consumer and saga migrations, and the effects table. */
  static void migrate(DataSource ds) throws Exception {
    Migrations.apply(ds, "producer");
    Migrations.apply(ds, "outbox");
    Migrations.apply(ds, "consumer");
    Migrations.apply(ds, "saga");
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE effects (id BIGSERIAL PRIMARY KEY, saga_id TEXT, step TEXT, direction TEXT)");
    }
  }

  private static Consumer<SagaStep.RemoteSpec<String>> remote(String participant, String prefix,
      Duration timeout) {
    return s -> s.participant(participant).command(prefix + participant + "-cmd", SagaCodec::utf8)
        .compensation(prefix + participant + "-comp", SagaCodec::utf8).timeout(timeout)
        .retry(new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(20)));
  }

  private SagaParticipant participant(String name, String step) {
    SagaParticipant.Builder b = SagaParticipant.builder(name).producer(producer)
        .step(step, (c, m) -> {
          String data = m.payloadAsString().replace(" ", "");
          if (data.contains("\"refuse\":\"" + step + "\"")) {
            throw new BusinessException("REFUSED", step + " refused");
          }
          if (data.contains("\"failOnce\":\"" + step + "\"")
              && failedOnce.add(m.header(SagaHeaders.SAGA_ID) + "/" + step)) {
            throw new IllegalStateException(step + " failed once");
          }
          effect(c, m.header(SagaHeaders.SAGA_ID), step, "forward");
          return ("{\"" + step + "\":\"ok\"}").getBytes();
        });
    if (withoutUndo.contains(step)) {
      return b.build();
    }
    return b.compensation(step, (c, m) -> {
      if (m.payloadAsString().replace(" ", "").contains("\"failUndo\":\"" + step + "\"")) {
        throw new IllegalStateException("undo of " + step + " failed");
      }
      effect(c, m.header(SagaHeaders.SAGA_ID), step, "compensate");
      return new byte[0];
    }).build();
  }

  private static void effect(Connection c, String sagaId, String step, String direction) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO effects (saga_id, step, direction) VALUES (?,?,?)")) {
      ps.setString(1, sagaId.startsWith("{") ? sagaId.replaceAll(".*\"id\": ?\"([^\"]+)\".*", "$1") : sagaId);
      ps.setString(2, step);
      ps.setString(3, direction);
      ps.executeUpdate();
    }
  }

  /** Starts saga {@code id} with data {@code {"id":"<id>"<extra>}}. */
  boolean start(String id, String extra) {
    return coordinator.start(definition, id, "{\"id\":\"" + id + "\"" + extra + "}");
  }

  /** Delivers {@code m} to its handler (the coordinator's or a participant's). */
  Outcome deliver(IncomingMessage m) {
    IdempotentHandler h = m.topic().endsWith(REPLIES) ? coordinator.replyHandler() : participants.get(m.topic());
    return h.handle(m);
  }

  /** Delivers every message of {@code mail}, and the ones they cause, until none is left. */
  void pump(Mailbox mail) throws Exception {
    for (List<IncomingMessage> batch = mail.next(); !batch.isEmpty(); batch = mail.next()) {
      batch.forEach(this::deliver);
    }
  }

  String state(String id) throws Exception {
    return one("SELECT state FROM converge_saga WHERE id = '" + id + "'");
  }

  /** The saga's events as {@code KIND step attempt}, in order. */
  List<String> events(String id) throws Exception {
    return list("SELECT kind || coalesce(' ' || step, '') || coalesce(' ' || attempt, '') FROM converge_saga_event"
        + " WHERE saga_id = '" + id + "' ORDER BY seq");
  }

  /** The participants' work runs for saga {@code id} as {@code step direction}, in order. */
  List<String> effects(String id) throws Exception {
    return list("SELECT step || ' ' || direction FROM effects WHERE saga_id = '" + id + "' ORDER BY id");
  }

  long count(String sql) throws Exception {
    return Long.parseLong(one(sql));
  }

  String one(String sql) throws Exception {
    List<String> l = list(sql);
    return l.isEmpty() ? null : l.get(0);
  }

  List<String> list(String sql) throws Exception {
    List<String> out = new ArrayList<>();
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }
}
