package io.converge.examples.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.core.Migrations;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.saga.SagaHeaders;
import io.converge.saga.tcc.TccHeaders;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The chaos-only reply hook on a real {@link TxnProducer} (the outbox backend, whose published messages are rows one
 * can count): unarmed, a reply is published; an armed drop takes the next forward reply of its step, which is then
 * never published while the unit of work's own writes commit, and the shot is recorded with its saga; an armed delay
 * publishes the reply after its wait; commands (no outcome header) and compensation replies are never touched. That
 * the services start with the hook on (their producer still joins Spring's transactions) is {@code ChaosPulsarIT}'s
 * case; without {@code examples.chaos.reply-faults=true} no bean of the hook exists.
 */
@ExtendWith(PostgresExtension.class)
class ChaosReplyFaultsIT {

  @Test
  void aDroppedReplyIsNeverPublishedAndAHeldBackOneIsPublishedLate(ConvergePostgres pg) throws Exception {
    DataSource ds = pg.newSchema("chaos_replies");
    for (String module : List.of("producer", "outbox")) {
      Migrations.apply(ds, module);
    }
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE work (saga text PRIMARY KEY)");
    }
    try (TxnProducer real = TxnProducer.builder().group("inventory").dataSource(ds).backend(OutboxBackend.outbox())
        .build()) {
      TxnProducer producer = new ChaosReplyFaults.Faulty(real);
      send(producer, reply("s-0", "reserve", SagaHeaders.FORWARD));
      assertThat(outbox(ds, "s-0")).as("no table of shots: published").isEqualTo(1);

      try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
        s.execute(ChaosReplyFaults.DDL);
        s.execute("INSERT INTO " + ChaosReplyFaults.ARMED + " (kind, step, delay_ms) VALUES ('drop', 'reserve', 0),"
            + " ('delay', 'notify', 600)");
      }
      send(producer, reply("s-1", "notify", SagaHeaders.COMPENSATE));
      send(producer, OutgoingMessage.builder("inventory-commands").key("s-2").payload(new byte[]{'{', '}'})
          .header(SagaHeaders.SAGA_ID, "s-2").header(SagaHeaders.STEP, "reserve")
          .header(SagaHeaders.DIRECTION, SagaHeaders.FORWARD).build());
      assertThat(outbox(ds, "s-1") + outbox(ds, "s-2")).as("a compensation reply and a command pass").isEqualTo(2);

      send(producer, reply("s-3", "reserve", SagaHeaders.FORWARD));
      assertThat(outbox(ds, "s-3")).as("dropped: never published").isZero();
      assertThat(count(ds, "SELECT count(*) FROM work WHERE saga = 's-3'")).as("the work committed").isEqualTo(1);
      send(producer, reply("s-4", "reserve", SagaHeaders.FORWARD));
      assertThat(outbox(ds, "s-4")).as("one shot, one drop: the next reply is published").isEqualTo(1);

      long t0 = System.nanoTime();
      send(producer, reply("s-5", "notify", SagaHeaders.FORWARD));
      assertThat((System.nanoTime() - t0) / 1_000_000).as("held back").isGreaterThanOrEqualTo(600);
      assertThat(outbox(ds, "s-5")).as("held back, then published").isEqualTo(1);

      assertThat(count(ds, "SELECT count(*) FROM " + ChaosReplyFaults.HITS
          + " WHERE (saga_id, step, kind) IN (('s-3', 'reserve', 'drop'), ('s-5', 'notify', 'delay'))"))
          .isEqualTo(2);
      assertThat(count(ds, "SELECT count(*) FROM " + ChaosReplyFaults.HITS)).isEqualTo(2);
    }
  }

  /**
   * The coordinator's side ({@link ChaosTccFaults}): an armed hold takes the next Try of a saga whose timeline shows
   * no timeout, and holds it and its re-sends (kept, never published) while the transition's writes commit; a saga
   * already disturbed, and the next saga, are published as usual; an armed copy publishes the next Confirm (or
   * Cancel) and keeps a copy, with its topic, id, key, headers and payload.
   */
  @Test
  void aHeldTryAndItsResendsAreKeptNotPublishedAndACopiedConfirmIsBothPublishedAndKept(ConvergePostgres pg)
      throws Exception {
    DataSource ds = pg.newSchema("chaos_tcc");
    for (String module : List.of("producer", "outbox", "saga")) {
      Migrations.apply(ds, module);
    }
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE work (saga text PRIMARY KEY)");
      s.execute(ChaosReplyFaults.DDL);
      s.execute("INSERT INTO " + ChaosReplyFaults.ARMED + " (kind, step) VALUES ('hold', 'try'), ('copy', 'confirm'),"
          + " ('copy', 'cancel')");
      s.execute("INSERT INTO converge_saga_event (saga_id, step, attempt, kind, at) VALUES ('t-0', 'reserve', 1,"
          + " 'TIMED_OUT', now())");
    }
    try (TxnProducer real = TxnProducer.builder().group("order").dataSource(ds).backend(OutboxBackend.outbox())
        .build()) {
      TxnProducer producer = new ChaosReplyFaults.Faulty(real);
      send(producer, tcc("t-0", "debit", SagaHeaders.FORWARD, "try", "m-0"));
      assertThat(outbox(ds, "t-0")).as("a saga a timeout disturbed: its Try published").isEqualTo(1);
      send(producer, tcc("t-1", "debit", SagaHeaders.FORWARD, "try", "m-1"));
      send(producer, tcc("t-1", "debit", SagaHeaders.FORWARD, "try", "m-1b"));
      assertThat(outbox(ds, "t-1")).as("held, and its re-send too").isZero();
      assertThat(count(ds, "SELECT count(*) FROM work WHERE saga = 't-1'")).as("the transition committed").isEqualTo(1);
      send(producer, tcc("t-2", "debit", SagaHeaders.FORWARD, "try", "m-2"));
      assertThat(outbox(ds, "t-2")).as("one shot: the next saga's Try published").isEqualTo(1);

      send(producer, tcc("t-2", "debit-confirm", SagaHeaders.FORWARD, "confirm", "m-3"));
      send(producer, tcc("t-4", "debit-confirm", SagaHeaders.FORWARD, "confirm", "m-4"));
      send(producer, tcc("t-1", "debit", SagaHeaders.COMPENSATE, "cancel", "m-5"));
      assertThat(outbox(ds, "t-2") + outbox(ds, "t-4")).as("the Confirms published").isEqualTo(3);
      assertThat(outbox(ds, "t-1")).as("the Cancel published").isEqualTo(1);

      assertThat(count(ds, "SELECT count(*) FROM " + ChaosReplyFaults.KEPT + " WHERE purpose = 'hold' AND saga_id ="
          + " 't-1' AND id IN ('" + id("m-1") + "', '" + id("m-1b")
          + "') AND topic = 'account-commands' AND msg_key = 't-1'"
          + " AND 'try' = ANY (vals) AND payload = '\\x7b7d'::bytea")).isEqualTo(2);
      assertThat(count(ds, "SELECT count(*) FROM " + ChaosReplyFaults.KEPT + " WHERE purpose = 'copy' AND"
          + " (saga_id, id) IN (('t-2', '" + id("m-3") + "'), ('t-1', '" + id("m-5") + "'))")).isEqualTo(2);
      assertThat(count(ds, "SELECT count(*) FROM " + ChaosReplyFaults.KEPT)).isEqualTo(4);
      assertThat(count(ds, "SELECT count(*) FROM " + ChaosReplyFaults.HITS + " WHERE (saga_id, step, kind) IN"
          + " (('t-1', 'debit', 'hold'), ('t-2', 'debit-confirm', 'copy'), ('t-1', 'debit', 'copy'))")).isEqualTo(3);
      assertThat(count(ds, "SELECT count(*) FROM " + ChaosReplyFaults.HITS)).isEqualTo(3);
    }
  }

  private static OutgoingMessage tcc(String saga, String step, String direction, String operation, String id) {
    return OutgoingMessage.builder(operation.equals("cancel") ? "account-compensations" : "account-commands").id(id(id))
        .key(saga).payload("{}".getBytes(StandardCharsets.UTF_8)).header(SagaHeaders.SAGA_ID, saga)
        .header(SagaHeaders.STEP, step).header(SagaHeaders.ATTEMPT, "1").header(SagaHeaders.DIRECTION, direction)
        .header(SagaHeaders.COMMAND_ID, "cmd-" + id).header(TccHeaders.GLOBAL_ID, saga)
        .header(TccHeaders.BRANCH_ID, "debit").header(TccHeaders.OPERATION, operation).build();
  }

  /** A message id (a canonical UUID) named {@code name}. */
  private static String id(String name) {
    return java.util.UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)).toString();
  }

  private static OutgoingMessage reply(String saga, String step, String direction) {
    return OutgoingMessage.builder("order-saga-replies").key(saga).payload("{}".getBytes(StandardCharsets.UTF_8))
        .header(SagaHeaders.SAGA_ID, saga).header(SagaHeaders.STEP, step).header(SagaHeaders.ATTEMPT, "1")
        .header(SagaHeaders.DIRECTION, direction).header(SagaHeaders.COMMAND_ID, "cmd-" + saga)
        .header(SagaHeaders.OUTCOME, "SUCCESS").build();
  }

  private static void send(TxnProducer producer, OutgoingMessage m) {
    producer.inTransaction(tx -> {
      try (PreparedStatement ps = tx.connection().prepareStatement(
          "INSERT INTO work (saga) VALUES (?) ON CONFLICT DO NOTHING")) {
        ps.setString(1, m.headers().get(SagaHeaders.SAGA_ID));
        ps.executeUpdate();
      }
      return tx.publish(m);
    });
  }

  private static long outbox(DataSource ds, String key) throws Exception {
    return count(ds, "SELECT count(*) FROM converge_outbox WHERE msg_key = '" + key + "'");
  }

  private static long count(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
