package io.converge.saga.tcc;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.BusinessException;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.core.Envelope;
import io.converge.core.Migrations;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import io.converge.saga.SagaHeaders;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link TccParticipant} on the real PostgreSQL, its commands delivered through its {@link IdempotentHandler} and
 * its replies published through a real {@link TxnProducer} (the outbox backend; the test reads the committed replies
 * from {@code converge_outbox}, no broker needed): the account service's debit as a TCC branch (Try freezes, Confirm
 * debits the frozen amount, Cancel unfreezes).
 */
class TccParticipantIT {

  private static DataSource ds;
  private static TxnProducer producer;
  private static IdempotentHandler handler;
  private static final AtomicBoolean failConfirmOnce = new AtomicBoolean();

  @BeforeAll
  static void start() throws Exception {
    ds = ConvergePostgres.shared().newSchema("tccpart");
    for (String set : List.of("producer", "outbox", "consumer", "tcc")) {
      Migrations.apply(ds, set);
    }
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE account (id text PRIMARY KEY, balance int NOT NULL, frozen int NOT NULL)");
    }
    producer = TxnProducer.builder().group("tcc-account").dataSource(ds).backend(OutboxBackend.outbox()).build();
    TccParticipant account = TccParticipant.builder("account").producer(producer)
        .branch("debit", TccParticipantIT::freeze, (c, m) -> {
          if (failConfirmOnce.getAndSet(false)) {
            throw new IllegalStateException("confirm failed once");
          }
          return update(c, m, "balance = balance - ?, frozen = frozen - ?", 2);
        }, (c, m) -> update(c, m, "frozen = frozen - ?", 1))
        .lockTimeout(Duration.ofMillis(300)).build();
    handler = account.handler("tcc-account", FailurePolicy.defaults().withBackoff(Duration.ofMillis(5),
        Duration.ofMillis(10)));
  }

  @AfterAll
  static void stop() throws Exception {
    producer.close();
  }

  private static byte[] freeze(Connection c, IncomingMessage m) throws Exception {
    if (m.payloadAsString().contains("refuse")) {
      throw new BusinessException("INSUFFICIENT_FUNDS", "not enough money on " + account(m));
    }
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO account VALUES (?, 100, ?) ON CONFLICT (id) DO UPDATE SET frozen = account.frozen + ?")) {
      ps.setString(1, account(m));
      ps.setInt(2, 30);
      ps.setInt(3, 30);
      ps.executeUpdate();
    }
    return ("{\"frozen\":30}").getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] update(Connection c, IncomingMessage m, String set, int params) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("UPDATE account SET " + set + " WHERE id = ?")) {
      for (int i = 1; i <= params; i++) {
        ps.setInt(i, 30);
      }
      ps.setString(params + 1, account(m));
      ps.executeUpdate();
    }
    return new byte[0];
  }

  private static String account(IncomingMessage m) {
    return m.header(TccHeaders.GLOBAL_ID);
  }

  /** A branch command as the coordinator sends it: a new message id per send, the same command id per re-send. */
  private static IncomingMessage command(String global, TccOperation op, String attempt, String payload) {
    return IncomingMessage.builder().topic("account-debit").payload(payload)
        .header(Envelope.MESSAGE_ID, UUID.randomUUID().toString()).header(Envelope.TENANT, "shop")
        .header(SagaHeaders.SAGA_ID, global).header(SagaHeaders.STEP, "debit").header(SagaHeaders.ATTEMPT, attempt)
        .header(SagaHeaders.DIRECTION, op == TccOperation.CANCEL ? SagaHeaders.COMPENSATE : SagaHeaders.FORWARD)
        .header(SagaHeaders.COMMAND_ID, global + "/debit/" + op.wireName() + "/" + attempt)
        .header(SagaHeaders.REPLY_TO, "tcc-replies").header(TccHeaders.GLOBAL_ID, global)
        .header(TccHeaders.BRANCH_ID, "debit").header(TccHeaders.OPERATION, op.wireName()).build();
  }

  private record Reply(Map<String, String> headers, String payload) {

    String h(String name) {
      return headers.get(name);
    }
  }

  /** The replies published for {@code global}, in commit order. */
  private static List<Reply> replies(String global) throws Exception {
    List<Reply> out = new java.util.ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT header_names, header_values, payload FROM converge_outbox WHERE topic = 'tcc-replies' "
                + "AND msg_key = ? ORDER BY seq")) {
      ps.setString(1, global);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String[] names = strings(rs.getArray(1));
          String[] values = strings(rs.getArray(2));
          Map<String, String> h = new HashMap<>();
          for (int i = 0; i < names.length; i++) {
            h.put(names[i], values[i]);
          }
          out.add(new Reply(h, new String(rs.getBytes(3), StandardCharsets.UTF_8)));
        }
      }
    }
    return out;
  }

  private static String[] strings(Array a) throws Exception {
    return (String[]) a.getArray();
  }

  private static Reply last(String global) throws Exception {
    List<Reply> all = replies(global);
    return all.get(all.size() - 1);
  }

  private static int[] account(String id) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT balance, frozen FROM account WHERE id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new int[]{rs.getInt(1), rs.getInt(2)} : null;
      }
    }
  }

  @Test
  void tryThenConfirmDebitsTheFrozenAmountOnceAndAReSentTryIsAnsweredFromTheBarrier() throws Exception {
    String g = "acct-" + UUID.randomUUID();
    assertThat(handler.handle(command(g, TccOperation.TRY, "1", "{}"))).isEqualTo(Outcome.PROCESSED);
    Reply tried = last(g);
    assertThat(tried.h(SagaHeaders.OUTCOME)).isEqualTo("SUCCESS");
    assertThat(tried.h(TccHeaders.OUTCOME)).isEqualTo("RAN");
    assertThat(tried.payload()).isEqualTo("{\"frozen\":30}");
    assertThat(tried.h(SagaHeaders.SAGA_ID)).isEqualTo(g);
    assertThat(tried.h(SagaHeaders.STEP)).isEqualTo("debit");
    assertThat(tried.h(SagaHeaders.ATTEMPT)).isEqualTo("1");
    assertThat(tried.h(SagaHeaders.DIRECTION)).isEqualTo(SagaHeaders.FORWARD);
    assertThat(tried.h(SagaHeaders.COMMAND_ID)).isEqualTo(g + "/debit/try/1");
    assertThat(tried.h(Envelope.TENANT)).isEqualTo("shop");

    // the coordinator asks again after a timeout: a new send, answered from the stored result
    assertThat(handler.handle(command(g, TccOperation.TRY, "1", "{}"))).isEqualTo(Outcome.PROCESSED);
    assertThat(last(g).h(TccHeaders.OUTCOME)).isEqualTo("DUPLICATE");
    assertThat(last(g).payload()).isEqualTo("{\"frozen\":30}");
    assertThat(account(g)).containsExactly(100, 30);

    handler.handle(command(g, TccOperation.CONFIRM, "1", "{}"));
    handler.handle(command(g, TccOperation.CONFIRM, "1", "{}"));
    assertThat(replies(g)).extracting(r -> r.h(TccHeaders.OUTCOME)).containsExactly("RAN", "DUPLICATE", "RAN",
        "DUPLICATE");
    assertThat(account(g)).containsExactly(70, 0);
  }

  @Test
  void aCancelBeforeItsTryIsEmptyAndTheLateTryIsRefusedAsHanging() throws Exception {
    String g = "acct-" + UUID.randomUUID();
    handler.handle(command(g, TccOperation.CANCEL, "1", "{}"));
    Reply cancelled = last(g);
    assertThat(cancelled.h(SagaHeaders.OUTCOME)).isEqualTo("SUCCESS");
    assertThat(cancelled.h(TccHeaders.OUTCOME)).isEqualTo("EMPTY_ROLLBACK");
    assertThat(cancelled.h(SagaHeaders.DIRECTION)).isEqualTo(SagaHeaders.COMPENSATE);

    handler.handle(command(g, TccOperation.TRY, "1", "{}"));
    Reply refused = last(g);
    assertThat(refused.h(SagaHeaders.OUTCOME)).isEqualTo("BUSINESS_FAILURE");
    assertThat(refused.h(SagaHeaders.REASON)).isEqualTo("HANGING_REFUSED");
    assertThat(refused.h(TccHeaders.OUTCOME)).isEqualTo("HANGING_REFUSED");
    assertThat(account(g)).isNull(); // nothing frozen without an order
  }

  @Test
  void aRefusedTryStoresNothingAndATechnicalFailureIsAskedAgain() throws Exception {
    String g = "acct-" + UUID.randomUUID();
    handler.handle(command(g, TccOperation.TRY, "1", "{\"refuse\":true}"));
    Reply refused = last(g);
    assertThat(refused.h(SagaHeaders.OUTCOME)).isEqualTo("BUSINESS_FAILURE");
    assertThat(refused.h(SagaHeaders.REASON)).isEqualTo("INSUFFICIENT_FUNDS");
    assertThat(refused.h(TccHeaders.OUTCOME)).isNull();
    // nothing was stored: the Cancel the coordinator sends next is empty
    handler.handle(command(g, TccOperation.CANCEL, "1", "{}"));
    assertThat(last(g).h(TccHeaders.OUTCOME)).isEqualTo("EMPTY_ROLLBACK");

    String g2 = "acct-" + UUID.randomUUID();
    handler.handle(command(g2, TccOperation.CONFIRM, "1", "{}"));
    assertThat(last(g2).h(SagaHeaders.OUTCOME)).isEqualTo("TECHNICAL_FAILURE");
    assertThat(last(g2).h(SagaHeaders.REASON)).isEqualTo(ConfirmWithoutTryException.REASON);
    handler.handle(command(g2, TccOperation.TRY, "1", "{}"));
    failConfirmOnce.set(true);
    handler.handle(command(g2, TccOperation.CONFIRM, "1", "{}"));
    assertThat(last(g2).h(SagaHeaders.OUTCOME)).isEqualTo("TECHNICAL_FAILURE");
    // the reply leaves the service: it names the exception's class, never its message (data, SQL)
    assertThat(last(g2).payload()).contains("java.lang.IllegalStateException").doesNotContain("confirm failed once");
    handler.handle(command(g2, TccOperation.CONFIRM, "2", "{}"));
    assertThat(last(g2).h(TccHeaders.OUTCOME)).isEqualTo("RAN"); // the failed confirm left no row behind
    assertThat(account(g2)).containsExactly(70, 0);
  }

  @Test
  void aCancelAfterTheConfirmIsAnAnomalyAndACallBlockedOnALockATechnicalFailureBothStoringNothing()
      throws Exception {
    String g = "acct-" + UUID.randomUUID();
    handler.handle(command(g, TccOperation.TRY, "1", "{}"));
    handler.handle(command(g, TccOperation.CONFIRM, "1", "{}"));
    handler.handle(command(g, TccOperation.CANCEL, "1", "{}"));
    assertThat(last(g).h(SagaHeaders.OUTCOME)).isEqualTo("ANOMALY");
    assertThat(last(g).h(SagaHeaders.REASON)).isEqualTo(CancelAfterConfirmException.REASON);
    assertThat(account(g)).as("the cancel did not unfreeze after the debit").containsExactly(70, 0);

    String g2 = "acct-" + UUID.randomUUID();
    handler.handle(command(g2, TccOperation.TRY, "1", "{}"));
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      // another transaction holds the Confirm's row, uncommitted
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO converge_tcc_barrier (tenant, global_id, "
          + "branch_id, operation, origin, outcome, result) VALUES ('shop', ?, 'debit', 'confirm', 'confirm', "
          + "'RAN', ''::bytea)")) {
        ps.setString(1, g2);
        ps.executeUpdate();
      }
      org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(10),
          () -> handler.handle(command(g2, TccOperation.CONFIRM, "1", "{}")));
      c.rollback();
    }
    assertThat(last(g2).h(SagaHeaders.OUTCOME)).isEqualTo("TECHNICAL_FAILURE");
    handler.handle(command(g2, TccOperation.CONFIRM, "2", "{}"));
    assertThat(last(g2).h(TccHeaders.OUTCOME)).isEqualTo("RAN"); // nothing stored by the blocked one
    assertThat(account(g2)).containsExactly(70, 0);
  }

  @Test
  void aMessageWithoutTheTccHeadersIsRefusedNotRun() throws Exception {
    String g = "acct-" + UUID.randomUUID();
    IncomingMessage bad = IncomingMessage.builder().topic("account-debit").payload("{}")
        .header(Envelope.MESSAGE_ID, UUID.randomUUID().toString()).header(SagaHeaders.SAGA_ID, g)
        .header(SagaHeaders.STEP, "debit").header(SagaHeaders.REPLY_TO, "tcc-replies")
        .header(TccHeaders.GLOBAL_ID, g).header(TccHeaders.BRANCH_ID, "debit").header(TccHeaders.OPERATION, "freeze")
        .build();
    assertThat(handler.handle(bad)).isEqualTo(Outcome.BUSINESS_FAILURE);
    assertThat(replies(g)).isEmpty();
  }
}
