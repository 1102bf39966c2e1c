package io.converge.examples.payment;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/** The payment API over real HTTP on the embedded PostgreSQL: business-key idempotency under concurrency. */
@ExtendWith(PostgresExtension.class)
class PaymentApiIT {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static ConfigurableApplicationContext app;
  private static JdbcTemplate jdbc;
  private static String base;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start(ConvergePostgres pg) {
    DataSource db = pg.newSchema("payment_it");
    String schema = ((PGSimpleDataSource) db).getCurrentSchema();
    jdbc = new JdbcTemplate(db);
    app = new SpringApplicationBuilder(PaymentServiceApp.class).properties("spring.config.name=payment").run(
        "--spring.datasource.url=" + pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "currentSchema="
            + schema,
        "--spring.datasource.username=" + pg.user(), "--spring.datasource.password=" + pg.password(),
        "--server.port=0");
    base = "http://127.0.0.1:" + app.getEnvironment().getRequiredProperty("local.server.port");
  }

  @AfterAll
  static void stop() {
    if (app != null) {
      app.close();
    }
  }

  @Test
  void prometheusExposesTheStuckGauges() {
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).untilAsserted(() -> {
      HttpResponse<String> r = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create(base + "/actuator/prometheus")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).containsPattern("converge_stuck_items\\{[^}]*kind=\"consumer-dlq\"[^}]*} 0\\.0")
          .containsPattern("converge_stuck_items\\{[^}]*kind=\"state\"[^}]*} \\d");
    });
  }

  @Test
  void twentyConcurrentChargesWithOneOutTradeNoMakeOneCaptureAndOneAnswer() throws Exception {
    String outTradeNo = "t-" + UUID.randomUUID();
    Map<String, Object> body = Map.of("merchantId", "m-7", "outTradeNo", outTradeNo, "amountCents", 4200, "currency",
        "EUR");
    List<Reply> replies = concurrently(20, () -> post("/charges", body));
    assertThat(replies).allSatisfy(r -> assertThat(r.status()).isEqualTo(200));
    assertThat(replies.stream().map(r -> r.body().get("id")).distinct()).hasSize(1);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM charge WHERE out_trade_no = ?", Long.class, outTradeNo))
        .isEqualTo(1);
    assertThat(post("/charges", body).body().get("state")).isEqualTo("CAPTURED");
  }

  @Test
  void sameOutTradeNoWithAnotherAmountIs400WithTheFirstCharge() throws Exception {
    String outTradeNo = "t-" + UUID.randomUUID();
    Reply first = post("/charges",
        Map.of("merchantId", "m-7", "outTradeNo", outTradeNo, "amountCents", 100, "currency", "EUR"));
    Reply other = post("/charges",
        Map.of("merchantId", "m-7", "outTradeNo", outTradeNo, "amountCents", 10000, "currency", "EUR"));
    assertThat(other.status()).isEqualTo(400);
    assertThat(other.body().get("error")).isEqualTo("out-trade-no-reused");
    assertThat(other.body().get("first")).isEqualTo(first.body());
    // another merchant may use the same out_trade_no
    assertThat(
        post("/charges", Map.of("merchantId", "m-8", "outTradeNo", outTradeNo, "amountCents", 10000, "currency", "EUR"))
            .status())
        .isEqualTo(200);
  }

  @Test
  void concurrentRefundsUnderDifferentNumbersRefundOnce() throws Exception {
    Reply charge = post("/charges",
        Map.of("merchantId", "m-7", "outTradeNo", "t-" + UUID.randomUUID(), "amountCents", 900,
            "currency", "EUR"));
    String id = (String) charge.body().get("id");
    java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
    List<Reply> replies = concurrently(10,
        () -> post("/charges/" + id + "/refunds",
            Map.of("outRefundNo", "r-" + n.incrementAndGet(), "amountCents", 900)));
    assertThat(replies.stream().filter(r -> r.status() == 200)).hasSize(1);
    assertThat(replies.stream().filter(r -> r.status() == 409)).hasSize(9);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM refund WHERE charge_id = ?", Long.class, id)).isEqualTo(1);
    assertThat(post("/charges/" + id + "/refunds", Map.of("outRefundNo", "r-x", "amountCents", 900)).status())
        .isEqualTo(409);
    assertThat(jdbc.queryForObject("SELECT state FROM charge WHERE id = ?", String.class, id)).isEqualTo("REFUNDED");
  }

  @Test
  void declinedChargeFailsAndIsNotRefundable() throws Exception {
    Reply charge = post("/charges", Map.of("merchantId", "m-7", "outTradeNo", "t-" + UUID.randomUUID(),
        "amountCents", Charges.AUTHORIZATION_LIMIT_CENTS + 1, "currency", "EUR"));
    assertThat(charge.body().get("state")).isEqualTo("FAILED");
    Reply refund = post("/charges/" + charge.body().get("id") + "/refunds",
        Map.of("outRefundNo", "r-1", "amountCents", Charges.AUTHORIZATION_LIMIT_CENTS + 1));
    assertThat(refund.status()).isEqualTo(409);
    assertThat(refund.body().get("error")).isEqualTo("not-refundable");
  }

  @Test
  void invalidInputIs400() throws Exception {
    assertThat(
        post("/charges", Map.of("merchantId", "m-7", "outTradeNo", "x", "amountCents", 0, "currency", "EUR")).status())
        .isEqualTo(400);
    assertThat(
        post("/charges", Map.of("merchantId", "m-7", "outTradeNo", "x", "amountCents", 5, "currency", "euro")).status())
        .isEqualTo(400);
    assertThat(post("/charges/ch-none/refunds", Map.of("outRefundNo", "r", "amountCents", 5)).status()).isEqualTo(404);
  }

  @Test
  void providerCallbacksAreVerifiedAndAppliedOnce() throws Exception {
    String id = (String) post("/charges", Map.of("merchantId", "m-7", "outTradeNo", "t-" + UUID.randomUUID(),
        "amountCents", 700, "currency", "EUR")).body().get("id");
    String path = "/charges/" + id + "/provider-callback";
    long now = System.currentTimeMillis() / 1000;
    byte[] ok = ("{\"eventId\":\"e-1\",\"chargeId\":\"" + id + "\",\"outcome\":\"confirmed\"}")
        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    byte[] failed = ("{\"eventId\":\"e-2\",\"chargeId\":\"" + id + "\",\"outcome\":\"failed\"}")
        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    String signature = sign(ProviderCallbacks.DEMO_SECRET, now, ok);
    HttpResponse<String> first = callback(path, ok, signature);
    assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
    assertThat(first.body()).contains("\"providerStatus\":\"CONFIRMED\"", "\"callbacksApplied\":1");
    HttpResponse<String> copy = callback(path, ok, signature);
    assertThat(copy.body()).isEqualTo(first.body());
    assertThat(copy.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(callback(path, failed, sign("whsec_guessed", now, failed)).statusCode()).isEqualTo(401);
    assertThat(callback(path, failed, sign(ProviderCallbacks.DEMO_SECRET, now - 600, failed)).statusCode())
        .isEqualTo(400);
    assertThat(callback(path, failed, "t=" + now).statusCode()).isEqualTo(400);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM provider_callback WHERE charge_id = ?", Long.class, id))
        .isEqualTo(1);
    assertThat(jdbc.queryForObject("SELECT provider_status FROM charge WHERE id = ?", String.class, id))
        .isEqualTo("CONFIRMED");
    // each refusal counted with its reason
    String metrics = http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/prometheus")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    assertThat(metrics).containsPattern("callback_refused_total\\{.*reason=\"signature-mismatch\".*} [1-9]")
        .containsPattern("callback_refused_total\\{.*reason=\"timestamp-out-of-tolerance\".*} [1-9]")
        .containsPattern("callback_replayed_total\\{.*} [1-9]");
  }

  private static String sign(String secret, long t, byte[] body) {
    return io.converge.consumer.http.SignedCallbackFilter
        .sign(secret.getBytes(java.nio.charset.StandardCharsets.UTF_8), t, body);
  }

  private HttpResponse<String> callback(String path, byte[] body, String signature) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
        .header("Converge-Signature", signature).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  record Reply(int status, Map<String, Object> body) {
  }

  private Reply post(String path, Map<String, ?> body) throws Exception {
    HttpResponse<byte[]> r = http.send(
        HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body))).build(),
        HttpResponse.BodyHandlers.ofByteArray());
    return new Reply(r.statusCode(), JSON.readValue(r.body(), new TypeReference<Map<String, Object>>() {
    }));
  }

  private static List<Reply> concurrently(int n, Callable<Reply> call) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      List<Callable<Reply>> calls = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        calls.add(call);
      }
      List<Reply> out = new ArrayList<>();
      for (Future<Reply> f : pool.invokeAll(calls)) {
        out.add(f.get());
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }
}
