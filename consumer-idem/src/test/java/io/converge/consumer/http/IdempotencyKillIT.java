package io.converge.consumer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.core.Migrations;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * An API instance killed mid-handler (a child JVM halts after the claim, before the response is
 * stored): its key is not stuck. A retry on another instance gets 409 while the dead claim's lease
 * runs, then takes the claim over and runs the handler once.
 */
@ExtendWith({PostgresExtension.class, ChildJvmExtension.class})
class IdempotencyKillIT {

  static final Duration LEASE = Duration.ofSeconds(10); // the early retry must come within it on a loaded machine

  static IdempotencyFilter filter(DataSource ds) {
    IdempotencySettings d = IdempotencySettings.defaults();
    return IdempotencyFilter.builder().dataSource(ds).tenantResolver(TenantResolver.fixed("shop"))
        .endpoints(KilledApiMain.endpoints())
        .settings(
            new IdempotencySettings(d.ttl(), LEASE, d.keyHeader(), d.replayedHeaders(), List.of(), d.maxBodyBytes()))
        .build();
  }

  @Test
  void aKeyWhoseInstanceDiedMidHandlerIsTakenOverAfterTheLease(ConvergePostgres pg, ChildJvms jvms) throws Exception {
    DataSource db = pg.newSchema("idemkill");
    Migrations.apply(db, "idempotency");
    String schema = new JdbcTemplate(db).queryForObject("SELECT current_schema()", String.class);
    try (ChildJvm child = jvms.launch(KilledApiMain.class).database(pg.jdbcUrl(), pg.user(), pg.password(), schema)
        .start()) {
      String childBase = child.awaitLine(KilledApiMain.READY, Duration.ofSeconds(60))
          .substring(KilledApiMain.READY.length());
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      String key = UUID.randomUUID().toString();
      String body = "{\"amount\":12000,\"currency\":\"CNY\"}";
      AtomicInteger runs = new AtomicInteger();
      HttpServlet heir = new HttpServlet() {

        @Override
        protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
          resp.setStatus(201);
          resp.setContentType("application/json");
          resp.getWriter().write("{\"charge\":" + runs.incrementAndGet() + "}");
        }
      };
      // the other instance is up before the first attempt, so that the retry comes well within the lease
      try (BareTomcat other = new BareTomcat().mount("/api", filter(db), heir).start()) {
        // the first attempt dies with its instance: the client sees the connection drop
        assertThatThrownBy(() -> http.send(request(childBase, key, body), HttpResponse.BodyHandlers.ofString()))
            .isInstanceOf(IOException.class);
        int exit = child.awaitExit(Duration.ofSeconds(30)); // fails when the child did not exit
        assertThat(exit).as(child.output()).isEqualTo(ChildJvm.HALTED);
        assertThat(child.output()).contains(KilledApiMain.HANDLING + key);
        JdbcTemplate jdbc = new JdbcTemplate(db);
        assertThat(
            jdbc.queryForObject("SELECT status FROM converge_idempotency_key WHERE idem_key = ?", String.class, key))
            .isEqualTo("PROCESSING");

        // while the dead claim's lease runs, a retry is told to wait: a slow instance is not presumed dead
        HttpResponse<String> early = http.send(request(other.base(), key, body), HttpResponse.BodyHandlers.ofString());
        assertThat(early.statusCode()).as(early.body()).isEqualTo(409);
        assertThat(early.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(runs).hasValue(0);

        // after the lease: taken over, run once, stored
        await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(500)).until(() -> http
            .send(request(other.base(), key, body), HttpResponse.BodyHandlers.ofString()).statusCode() == 201);
        assertThat(runs).hasValue(1);
        HttpResponse<String> replay = http.send(request(other.base(), key, body), HttpResponse.BodyHandlers.ofString());
        assertThat(replay.statusCode()).isEqualTo(201);
        assertThat(replay.body()).isEqualTo("{\"charge\":1}");
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(runs).hasValue(1);
        assertThat(
            jdbc.queryForObject("SELECT status FROM converge_idempotency_key WHERE idem_key = ?", String.class, key))
            .isEqualTo("COMPLETED");
      }
    }
  }

  private static HttpRequest request(String base, String key, String body) {
    return HttpRequest.newBuilder(URI.create(base + "/api/charges")).timeout(Duration.ofSeconds(20))
        .header("Content-Type", "application/json").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(body)).build();
  }
}
