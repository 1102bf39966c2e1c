package io.converge.saga.tcc.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.BusinessException;
import io.converge.core.Migrations;
import io.converge.saga.tcc.TccHeaders;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link TccServlet} in a bare embedded Tomcat on a random port, on the real PostgreSQL: the HTTP protocol of a TCC
 * branch as the coordinator's client speaks it (status codes, {@value TccHeaders#OUTCOME}, problem bodies), and the
 * barrier and the work in one transaction.
 */
class TccServletIT {

  private static Tomcat tomcat;
  private static String base;
  private static DataSource ds;
  private static final HttpClient http = HttpClient.newHttpClient();
  private static final AtomicInteger tries = new AtomicInteger();

  @BeforeAll
  static void start() throws Exception {
    ds = ConvergePostgres.shared().newSchema("tcchttp");
    Migrations.apply(ds, "tcc");
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE frozen (global_id text PRIMARY KEY, amount int NOT NULL)");
    }
    TccServlet servlet = TccServlet.builder().dataSource(ds).maxBodyBytes(1024).lockTimeout(Duration.ofMillis(300))
        .work((c, r) -> {
          tries.incrementAndGet();
          String body = new String(r.payload(), StandardCharsets.UTF_8);
          if (body.contains("refuse")) {
            throw new BusinessException("INSUFFICIENT_FUNDS", "not enough money");
          }
          write(c, "INSERT INTO frozen VALUES (?, 30)", r.call().globalId());
          if (body.contains("crash")) {
            throw new IllegalStateException("the disk is full");
          }
          return ("{\"frozen\":30,\"global\":\"" + r.call().globalId() + "\"}").getBytes(StandardCharsets.UTF_8);
        }, (c, r) -> {
          write(c, "DELETE FROM frozen WHERE global_id = ?", r.call().globalId());
          return "{\"debited\":30}".getBytes(StandardCharsets.UTF_8);
        }, (c, r) -> {
          write(c, "DELETE FROM frozen WHERE global_id = ?", r.call().globalId());
          return null;
        }).build();
    tomcat = new Tomcat();
    tomcat.setBaseDir(Files.createTempDirectory("tomcat-tcc").toString());
    tomcat.setPort(0);
    tomcat.getConnector();
    Context context = tomcat.addContext("/account", null);
    Tomcat.addServlet(context, "debit", servlet);
    context.addServletMappingDecoded("/debit/*", "debit");
    tomcat.start();
    base = "http://127.0.0.1:" + tomcat.getConnector().getLocalPort() + "/account/debit/";
  }

  @AfterAll
  static void stop() throws Exception {
    tomcat.stop();
    tomcat.destroy();
  }

  private static void write(Connection c, String sql, String global) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, global);
      ps.executeUpdate();
    }
  }

  private static boolean frozen(String global) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT 1 FROM frozen WHERE global_id = ?")) {
      ps.setString(1, global);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  private static HttpResponse<String> post(String global, String op, String body, String... extraHeaders)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + op))
        .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json");
    if (global != null) {
      b.header(TccHeaders.GLOBAL_ID, global).header(TccHeaders.BRANCH_ID, "debit").header(TccHeaders.OPERATION, op);
    }
    for (int i = 0; i < extraHeaders.length; i += 2) {
      b.header(extraHeaders[i], extraHeaders[i + 1]);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String outcome(HttpResponse<?> r) {
    return r.headers().firstValue(TccHeaders.OUTCOME).orElse(null);
  }

  @Test
  void tryConfirmAndTheirDuplicatesAnswer200WithTheStoredResult() throws Exception {
    String g = "g-" + UUID.randomUUID();
    HttpResponse<String> tried = post(g, "try", "{\"amount\":30}");
    assertThat(tried.statusCode()).isEqualTo(200);
    assertThat(outcome(tried)).isEqualTo("RAN");
    assertThat(tried.body()).isEqualTo("{\"frozen\":30,\"global\":\"" + g + "\"}");
    HttpResponse<String> again = post(g, "try", "{\"amount\":30}");
    assertThat(again.statusCode()).isEqualTo(200);
    assertThat(outcome(again)).isEqualTo("DUPLICATE");
    assertThat(again.body()).isEqualTo(tried.body());

    assertThat(outcome(post(g, "confirm", "{}"))).isEqualTo("RAN");
    HttpResponse<String> confirmedAgain = post(g, "confirm", "{}");
    assertThat(confirmedAgain.statusCode()).isEqualTo(200);
    assertThat(outcome(confirmedAgain)).isEqualTo("DUPLICATE");
    assertThat(confirmedAgain.body()).isEqualTo("{\"debited\":30}");
    assertThat(frozen(g)).isFalse();
  }

  @Test
  void aCancelFirstIsAnEmptyRollbackAndTheLateTryIsA409() throws Exception {
    String g = "g-" + UUID.randomUUID();
    HttpResponse<String> cancelled = post(g, "cancel", "{}", "converge-tenant", "shop");
    assertThat(cancelled.statusCode()).isEqualTo(200);
    assertThat(outcome(cancelled)).isEqualTo("EMPTY_ROLLBACK");
    assertThat(cancelled.body()).isEmpty();
    int before = tries.get();
    HttpResponse<String> late = post(g, "try", "{}", "converge-tenant", "shop");
    assertThat(late.statusCode()).isEqualTo(409);
    assertThat(outcome(late)).isEqualTo("HANGING_REFUSED");
    assertThat(late.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
    assertThat(tries.get()).isEqualTo(before);
    assertThat(frozen(g)).isFalse();
    // the tenant is part of the key: the same ids in the default tenant are another branch
    assertThat(post(g, "try", "{}").statusCode()).isEqualTo(200);
  }

  @Test
  void aRefusedTryIsA422AndATechnicalFailureA500BothStoringNothing() throws Exception {
    String g = "g-" + UUID.randomUUID();
    HttpResponse<String> refused = post(g, "try", "{\"refuse\":true}");
    assertThat(refused.statusCode()).isEqualTo(422);
    assertThat(refused.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
    assertThat(refused.body()).contains("\"type\":\"urn:converge:tcc:refused\"").contains("INSUFFICIENT_FUNDS");

    String g2 = "g-" + UUID.randomUUID();
    HttpResponse<String> crashed = post(g2, "try", "{\"crash\":true}");
    assertThat(crashed.statusCode()).isEqualTo(500);
    // a stable problem, the exception only in the log
    assertThat(crashed.body()).contains("\"type\":\"urn:converge:tcc:failed\"").doesNotContain("disk is full")
        .doesNotContain("IllegalStateException");
    assertThat(frozen(g2)).isFalse(); // the work's write rolled back with the barrier row
    assertThat(outcome(post(g2, "try", "{}"))).isEqualTo("RAN"); // so the Try runs when asked again

    HttpResponse<String> noTry = post("g-" + UUID.randomUUID(), "confirm", "{}");
    assertThat(noTry.statusCode()).isEqualTo(500);
    assertThat(noTry.body()).contains("urn:converge:tcc:confirm-without-try").doesNotContain("Exception");
  }

  @Test
  void aCancelAfterTheConfirmAndAConfirmAfterTheCancelAreA422StoringNothing() throws Exception {
    String g = "g-" + UUID.randomUUID();
    assertThat(post(g, "try", "{}").statusCode()).isEqualTo(200);
    assertThat(post(g, "confirm", "{}").statusCode()).isEqualTo(200);
    HttpResponse<String> cancel = post(g, "cancel", "{}");
    assertThat(cancel.statusCode()).isEqualTo(422);
    assertThat(cancel.body()).contains("\"type\":\"urn:converge:tcc:cancel-after-confirm\"");
    assertThat(post(g, "cancel", "{}").statusCode()).as("nothing stored").isEqualTo(422);

    String g2 = "g-" + UUID.randomUUID();
    assertThat(post(g2, "try", "{}").statusCode()).isEqualTo(200);
    assertThat(post(g2, "cancel", "{}").statusCode()).isEqualTo(200);
    HttpResponse<String> confirm = post(g2, "confirm", "{}");
    assertThat(confirm.statusCode()).isEqualTo(422);
    assertThat(confirm.body()).contains("\"type\":\"urn:converge:tcc:confirm-after-cancel\"");
  }

  @Test
  void aCallBlockedOnARowLockGivesUpWithA503AfterTheLockTimeoutStoringNothing() throws Exception {
    String g = "g-" + UUID.randomUUID();
    assertThat(post(g, "try", "{}").statusCode()).isEqualTo(200);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      // another transaction holds the Confirm's row, uncommitted
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO converge_tcc_barrier (tenant, global_id, "
          + "branch_id, operation, origin, outcome, result) VALUES ('default', ?, 'debit', 'confirm', 'confirm', "
          + "'RAN', ''::bytea)")) {
        ps.setString(1, g);
        ps.executeUpdate();
      }
      HttpRequest blocked = HttpRequest.newBuilder(URI.create(base + "confirm")).timeout(Duration.ofSeconds(10))
          .POST(HttpRequest.BodyPublishers.ofString("{}")).header(TccHeaders.GLOBAL_ID, g)
          .header(TccHeaders.BRANCH_ID, "debit").header(TccHeaders.OPERATION, "confirm").build();
      HttpResponse<String> r = http.send(blocked, HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(r.headers().firstValue("Retry-After")).isPresent();
      assertThat(r.body()).contains("\"type\":\"urn:converge:tcc:lock-timeout\"").doesNotContain("55P03");
      c.rollback();
    }
    assertThat(outcome(post(g, "confirm", "{}"))).as("nothing stored: asked again, it runs").isEqualTo("RAN");
  }

  @Test
  void missingOrMalformedHeadersAreA400QuotingTheHeader() throws Exception {
    HttpResponse<String> none = post(null, "try", "{}");
    assertThat(none.statusCode()).isEqualTo(400);
    assertThat(none.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
    assertThat(none.body()).contains("header converge-tcc-global-id must be 1 to 200 characters, not blank, "
        + "but was absent");
    HttpResponse<String> bad = post(null, "try", "{}", TccHeaders.GLOBAL_ID, "g", TccHeaders.BRANCH_ID, "b",
        TccHeaders.OPERATION, "freeze");
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.body()).contains("converge-tcc-operation must be one of try, confirm, cancel, but was 'freeze'");
    assertThat(post("g-" + UUID.randomUUID(), "try", "x".repeat(1025)).statusCode()).isEqualTo(413);
  }
}
