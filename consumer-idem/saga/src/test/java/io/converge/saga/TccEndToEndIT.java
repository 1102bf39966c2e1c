package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.BusinessException;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.core.Migrations;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import io.converge.saga.tcc.TccHeaders;
import io.converge.saga.tcc.TccParticipant;
import io.converge.saga.tcc.http.TccServlet;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The coordinator with the participant helpers themselves, on the real PostgreSQL: a money transfer whose "account"
 * branch is a {@link TccParticipant} reached by messages (the outbox's rows delivered by the test, each command
 * twice, as a broker may) and whose "points" branch is a {@link TccServlet} in a real Tomcat reached over HTTP. Both
 * confirmed: the frozen amounts are applied once each. The points Try refused: the account's Try is cancelled
 * (its freeze released once) and the points' Cancel meets its barrier as an empty rollback. Proves that the two
 * sides speak the same protocol (headers, outcomes, status codes, the branch id).
 */
class TccEndToEndIT {

  private static DataSource ds;
  private static Tomcat tomcat;
  private static URI points;

  @BeforeAll
  static void start() throws Exception {
    ds = ConvergePostgres.shared().newSchema("tcc_e2e");
    for (String module : List.of("producer", "outbox", "consumer", "saga", "tcc")) {
      Migrations.apply(ds, module);
    }
    execute("CREATE TABLE ledger (global_id text, branch text, what text, amount int)");
    TccServlet servlet = TccServlet.builder().dataSource(ds).work((c, r) -> {
      if (new String(r.payload(), StandardCharsets.UTF_8).replace(" ", "").contains("\"refusePoints\":true")) {
        throw new BusinessException("NO_POINTS", "not enough points");
      }
      return record(c, r.call().globalId(), "points", "frozen");
    }, (c, r) -> record(c, r.call().globalId(), "points", "applied"),
        (c, r) -> record(c, r.call().globalId(), "points", "released")).build();
    tomcat = new Tomcat();
    tomcat.setBaseDir(Files.createTempDirectory("tomcat-tcc-e2e").toString());
    tomcat.setPort(0);
    tomcat.getConnector();
    Context context = tomcat.addContext("/points", null);
    Tomcat.addServlet(context, "tcc", servlet);
    context.addServletMappingDecoded("/tcc/*", "tcc");
    tomcat.start();
    points = URI.create("http://127.0.0.1:" + tomcat.getConnector().getLocalPort() + "/points/tcc/");
  }

  @AfterAll
  static void stop() throws Exception {
    tomcat.stop();
    tomcat.destroy();
  }

  @Test
  void theParticipantHelpersAnswerTheCoordinatorOverMessagesAndHttp() throws Exception {
    try (TxnProducer producer = TxnProducer.builder().group("tcc-e2e").dataSource(ds)
        .backend(OutboxBackend.outbox()).build()) {
      IdempotentHandler account = TccParticipant.builder("account").producer(producer)
          .branch("account", (c, m) -> record(c, m.header(TccHeaders.GLOBAL_ID), "account", "frozen"),
              (c, m) -> record(c, m.header(TccHeaders.GLOBAL_ID), "account", "applied"),
              (c, m) -> record(c, m.header(TccHeaders.GLOBAL_ID), "account", "released"))
          .build().handler("account");
      TccDefinition<String> transfer = TccDefinition.builder("transfer", SagaCodec.json())
          .globalTimeout(Duration.ofSeconds(30))
          .branch("account", b -> b.messages("account-tcc").timeout(Duration.ofSeconds(5)))
          .branch("points", b -> b.http(points.resolve("try"), points.resolve("confirm"), points.resolve("cancel"))
              .timeout(Duration.ofSeconds(5)))
          .build();
      try (SagaCoordinator coordinator = SagaCoordinator.builder().producer(producer).tcc(transfer)
          .replyTopic("tcc-e2e-replies")
          .replyPolicy(FailurePolicy.defaults().withBackoff(Duration.ofMillis(5), Duration.ofMillis(20))).build()) {
        Mailbox mail = Mailbox.fromNow(ds);
        coordinator.start(transfer, "paid", "{\"amount\":30}");
        coordinator.start(transfer, "refused", "{\"amount\":30,\"refusePoints\":true}");
        for (int round = 0; round < 20 && !(settled("paid") && settled("refused")); round++) {
          for (IncomingMessage m : mail.next()) {
            if (m.topic().equals("tcc-e2e-replies")) {
              coordinator.replyHandler().handle(m);
            } else {
              account.handle(m);
              account.handle(m); // a redelivery: deduplicated
            }
          }
          coordinator.poll(); // the HTTP branches are called here
        }
        assertThat(state("paid")).isEqualTo("COMPLETED");
        assertThat(state("refused")).isEqualTo("COMPENSATED");
      }
    }
    assertThat(ledger("paid")).containsExactly("account frozen", "points frozen", "account applied",
        "points applied");
    assertThat(ledger("refused")).as("the account's freeze released once; the refused points Try left nothing")
        .containsExactly("account frozen", "account released");
    assertThat(barrier("refused")).contains("points try cancel-first FENCED", "points cancel cancel EMPTY_ROLLBACK",
        "account cancel cancel RAN");
  }

  private static boolean settled(String id) throws Exception {
    String s = state(id);
    return "COMPLETED".equals(s) || "COMPENSATED".equals(s);
  }

  private static byte[] record(Connection c, String global, String branch, String what) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO ledger VALUES (?, ?, ?, 30)")) {
      ps.setString(1, global);
      ps.setString(2, branch);
      ps.setString(3, what);
      ps.executeUpdate();
    }
    return ("{\"" + what + "\":30}").getBytes(StandardCharsets.UTF_8);
  }

  private static String state(String id) throws Exception {
    List<String> rows = list("SELECT state FROM converge_saga WHERE id = ?", id);
    return rows.isEmpty() ? null : rows.get(0);
  }

  private static List<String> ledger(String global) throws Exception {
    return list("SELECT branch || ' ' || what FROM ledger WHERE global_id = ? ORDER BY ctid", global);
  }

  private static List<String> barrier(String global) throws Exception {
    return list("SELECT branch_id || ' ' || operation || ' ' || origin || ' ' || outcome FROM converge_tcc_barrier"
        + " WHERE global_id = ?", global);
  }

  private static List<String> list(String sql, String arg) throws Exception {
    List<String> out = new ArrayList<>();
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, arg);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    }
    return out;
  }

  private static void execute(String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
