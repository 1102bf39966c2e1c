package io.converge.consumer.http;

import static io.converge.consumer.http.IdempotentCalls.assertReplayed;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.PostgresExtension;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.ByteArrayOutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The filter in a real Spring Boot service (embedded Tomcat on a random port, the auto-configuration,
 * Spring MVC) on the embedded PostgreSQL, driven by a real HTTP client.
 */
@ExtendWith(PostgresExtension.class)
class IdempotencyFilterIT {

  private static ConfigurableApplicationContext app;
  private static OrdersApp.Orders orders;
  private static JdbcTemplate jdbc;
  private static MeterRegistry meters;
  private static String base;
  private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private static com.zaxxer.hikari.HikariDataSource tinyPool;

  /**
   * The filter's lease. Short, because a response the store refuses is tried again for half a lease before the
   * filter gives up ({@code storeDown}); longer than the endpoints' expected durations (3 s), as the settings require.
   */
  private static final int LEASE_SECONDS = 8;

  @BeforeAll
  static void start(DataSource ds) throws Exception {
    OrdersApp.dataSource = ds;
    com.zaxxer.hikari.HikariConfig tiny = new com.zaxxer.hikari.HikariConfig();
    tiny.setDataSource(ds);
    tiny.setMaximumPoolSize(1);
    tiny.setConnectionTimeout(250);
    tinyPool = new com.zaxxer.hikari.HikariDataSource(tiny);
    OrdersApp.tinyPool = tinyPool;
    io.converge.core.Migrations.apply(ds, "outbox");
    OrdersApp.producerTopic = "idem-txn-" + UUID.randomUUID().toString().substring(0, 8);
    OrdersApp.producer = io.converge.producer.TxnProducer.builder().group("idem-txn").dataSource(ds)
        .backend(io.converge.outbox.OutboxBackend.outbox()).topics(OrdersApp.producerTopic).build();
    app = new SpringApplicationBuilder(OrdersApp.class).properties(
        "server.port=0",
        "spring.main.banner-mode=off",
        "converge.consumer.enabled=false",
        "converge.idempotency.enabled=true",
        "converge.idempotency.tenant.source=header",
        "converge.idempotency.ignored-fields=client_ip,meta.sent_at",
        "converge.idempotency.max-body-size=64KB",
        "converge.idempotency.max-response-size=64KB",
        "converge.idempotency.lease=" + LEASE_SECONDS + "s",
        "converge.idempotency.endpoints[0].path=/orders/**",
        "converge.idempotency.endpoints[0].expected-duration=3s",
        "converge.idempotency.endpoints[1].path=/charges/*",
        "converge.idempotency.endpoints[2].path=/optional",
        "converge.idempotency.endpoints[2].required=false").run();
    orders = app.getBean(OrdersApp.Orders.class);
    jdbc = new JdbcTemplate(ds);
    jdbc.execute("CREATE TABLE IF NOT EXISTS cut_charge (idem_key text NOT NULL, run int NOT NULL)");
    jdbc.execute("CREATE TABLE IF NOT EXISTS cut_deferred (idem_key text NOT NULL, "
        + "CONSTRAINT cut_deferred_once UNIQUE (idem_key) DEFERRABLE INITIALLY DEFERRED)");
    meters = app.getBean(MeterRegistry.class);
    base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
  }

  @AfterAll
  static void stop() {
    if (app != null) {
      app.close();
    }
    if (tinyPool != null) {
      tinyPool.close();
    }
    if (OrdersApp.producer != null) {
      OrdersApp.producer.close();
    }
  }

  private static HttpResponse<String> post(String path, String tenant, String key, String json) throws Exception {
    return IdempotentCalls.post(base + path, "application/json", json, "X-Tenant-Id", tenant, "Idempotency-Key", key);
  }

  /** POSTs {@code {}} to {@code path} under {@code key} of tenant t1 while the handlers' one pooled connection is taken. */
  private static HttpResponse<String> postWhilePoolIsTaken(String path, String key) throws Exception {
    try (java.sql.Connection hog = tinyPool.getConnection()) {
      return post(path, "t1", key, "{}");
    }
  }

  /**
   * POSTs {@code body}, then {@code retryBody}, to {@code path} under one new key of tenant t1; asserts that both
   * answered {@code status}, the retry replaying the first answer, and that the handler ran once. Returns the retry.
   */
  private static HttpResponse<String> replayedOnce(String path, String body, String retryBody, int status)
      throws Exception {
    String key = key();
    HttpResponse<String> first = post(path, "t1", key, body);
    HttpResponse<String> retry = post(path, "t1", key, retryBody);
    assertThat(first.statusCode()).isEqualTo(status);
    assertReplayed(retry, first, status);
    assertThat(orders.runs("t1", key)).isEqualTo(1);
    return retry;
  }

  /** A POST written byte by byte, for header values a well-behaved client refuses to send. */
  private static String rawPost(String path, String tenant, byte[] key, String json) throws Exception {
    URI uri = URI.create(base);
    try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
      socket.setSoTimeout(10_000);
      ByteArrayOutputStream request = new ByteArrayOutputStream();
      request.writeBytes(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
          + "Content-Type: application/json\r\nX-Tenant-Id: " + tenant + "\r\nContent-Length: " + json.length()
          + "\r\nIdempotency-Key: ").getBytes(StandardCharsets.ISO_8859_1));
      request.writeBytes(key);
      request.writeBytes(("\r\n\r\n" + json).getBytes(StandardCharsets.ISO_8859_1));
      socket.getOutputStream().write(request.toByteArray());
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }

  /** A response read off a raw socket. */
  record Raw(int status, String head, String body) {
  }

  /** A request with its path sent exactly as written (clients normalise dot segments and refuse some escapes). */
  private static Raw raw(String path, String tenant, String key, String json) throws Exception {
    URI uri = URI.create(base);
    try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
      socket.setSoTimeout(20_000);
      String request = "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
          + "Content-Type: application/json\r\nX-Tenant-Id: " + tenant + "\r\nContent-Length: " + json.length() + "\r\n"
          + (key == null ? "" : "Idempotency-Key: " + key + "\r\n") + "\r\n" + json;
      socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
      String all = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      int end = all.indexOf("\r\n\r\n");
      return new Raw(Integer.parseInt(all.substring(9, 12)), all.substring(0, end), all.substring(end + 4));
    }
  }

  private static String key() {
    return UUID.randomUUID().toString();
  }

  private static double count(String meter) {
    return meters.find(meter).counters().stream().mapToDouble(c -> c.count()).sum();
  }

  private static void assertProblem(HttpResponse<String> r, int status, String code) {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
    assertThat(r.body()).contains("\"type\":\"urn:converge:idempotency:" + code + "\"")
        .contains("\"status\":" + status);
  }

  @Test
  void sequentialRetryReplaysTheFirstResponseExactly() throws Exception {
    String key = key();
    double hits = count("idempotency.hit");
    HttpResponse<String> first = post("/orders", "t1", key, "{\"amount\":100,\"currency\":\"CNY\"}");
    HttpResponse<String> second = post("/orders", "t1", key, "{\"amount\":100,\"currency\":\"CNY\"}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(first.headers().firstValue("X-Run")).isPresent();
    assertThat(second.statusCode()).isEqualTo(201);
    assertThat(second.body()).isEqualTo(first.body());
    assertThat(second.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
    assertThat(second.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
    assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(second.headers().firstValue("X-Run")).as("not whitelisted, not replayed").isEmpty();
    assertThat(orders.runs("t1", key)).isEqualTo(1);
    assertThat(count("idempotency.hit")).isEqualTo(hits + 1);
    assertThat(jdbc.queryForObject("SELECT status FROM converge_idempotency_key WHERE tenant = 't1' AND idem_key = ?",
        String.class, key)).isEqualTo("COMPLETED");
  }

  @Test
  void twentyConcurrentIdenticalRequestsRunTheHandlerOnce() throws Exception {
    String key = key();
    String body = "{\"sleep\":true,\"amount\":5}";
    ExecutorService pool = Executors.newFixedThreadPool(20);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<HttpResponse<String>>> futures = new ArrayList<>();
    try {
      for (int i = 0; i < 20; i++) {
        futures.add(pool.submit(() -> {
          go.await();
          return post("/orders", "t1", key, body);
        }));
      }
      go.countDown();
      List<HttpResponse<String>> responses = new ArrayList<>();
      for (Future<HttpResponse<String>> f : futures) {
        responses.add(f.get());
      }
      assertThat(orders.runs("t1", key)).isEqualTo(1);
      List<HttpResponse<String>> created = responses.stream().filter(r -> r.statusCode() == 201).toList();
      List<HttpResponse<String>> busy = responses.stream().filter(r -> r.statusCode() == 409).toList();
      assertThat(created.size() + busy.size()).isEqualTo(20);
      assertThat(created).isNotEmpty().allSatisfy(r -> assertThat(r.body()).isEqualTo(created.get(0).body()));
      assertThat(busy).allSatisfy(r -> {
        assertProblem(r, 409, "in-progress");
        assertThat(Integer.parseInt(r.headers().firstValue("Retry-After").orElseThrow())).isBetween(1, 3);
      });
      HttpResponse<String> after = post("/orders", "t1", key, body);
      assertThat(after.body()).isEqualTo(created.get(0).body());
      assertThat(after.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void sameKeyWithAnotherBodyIs422() throws Exception {
    String key = key();
    double conflicts = count("idempotency.conflict");
    assertThat(post("/orders", "t1", key, "{\"amount\":100}").statusCode()).isEqualTo(201);
    HttpResponse<String> other = post("/orders", "t1", key, "{\"amount\":101}");
    assertProblem(other, 422, "key-reused");
    // another path with the same key is another request too, however long the path
    assertProblem(post("/orders/x", "t1", key, "{\"amount\":100}"), 422, "key-reused");
    assertProblem(post("/orders/" + "p".repeat(3000), "t1", key, "{\"amount\":100}"), 422, "key-reused");
    assertThat(orders.runs("t1", key)).isEqualTo(1);
    assertThat(count("idempotency.conflict")).isEqualTo(conflicts + 3);
    // a path longer than the table's column is kept whole in the fingerprint
    String longKey = key();
    assertThat(post("/orders/" + "p".repeat(3000), "t1", longKey, "{}").statusCode()).isEqualTo(404);
    assertProblem(post("/orders/" + "p".repeat(2999) + "q", "t1", longKey, "{}"), 422, "key-reused");
  }

  @Test
  void equalNumbersReorderedMembersAndIgnoredFieldsFingerprintTheSame() throws Exception {
    replayedOnce("/orders",
        "{\"amount\":100,\"currency\":\"CNY\",\"client_ip\":\"10.0.0.1\",\"meta\":{\"sent_at\":1,\"app\":\"ios\"}}",
        "{ \"meta\": {\"app\":\"ios\", \"sent_at\": 2}, \"currency\": \"CNY\", \"amount\": 100.00, \"client_ip\": \"10.9.9.9\" }",
        201);
  }

  @Test
  void theSameKeyOfTwoTenantsIsTwoKeys() throws Exception {
    String key = key();
    HttpResponse<String> a = post("/orders", "tenant-a", key, "{\"amount\":1}");
    HttpResponse<String> b = post("/orders", "tenant-b", key, "{\"amount\":1}");
    assertThat(a.statusCode()).isEqualTo(201);
    assertThat(b.statusCode()).isEqualTo(201);
    assertThat(b.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(a.body()).contains("\"tenant\":\"tenant-a\"").isNotEqualTo(b.body());
    assertThat(b.body()).contains("\"tenant\":\"tenant-b\"");
    assertThat(post("/orders", "tenant-a", key, "{\"amount\":1}").body()).isEqualTo(a.body());
    assertThat(post("/orders", "tenant-b", key, "{\"amount\":1}").body()).isEqualTo(b.body());
    // a different body under tenant b does not collide with tenant a's key either way
    assertThat(orders.runs("tenant-a", key)).isEqualTo(1);
    assertThat(orders.runs("tenant-b", key)).isEqualTo(1);
    assertProblem(post("/orders", null, key, "{\"amount\":1}"), 400, "tenant-invalid");
  }

  @Test
  void aClaimWhoseProcessDiedIsTakenOverAfterItsLease() throws Exception {
    String body = "{\"amount\":42}";
    // the fingerprint of this request, from a completed one
    String probe = key();
    post("/orders", "t1", probe, body);
    String fingerprint = jdbc.queryForObject(
        "SELECT fingerprint FROM converge_idempotency_key WHERE tenant = 't1' AND idem_key = ?", String.class, probe);

    // a live claim (lease not over) of a process that has run 0.5 s of an expected 5 s: 409, retry in 5 s
    String live = key();
    jdbc.update("""
        INSERT INTO converge_idempotency_key (tenant, idem_key, fingerprint, method, path, status, lease_owner,
            leased_until, expected_ms, claimed_at, expires_at, day)
        VALUES ('t1', ?, ?, 'POST', '/orders', 'PROCESSING', ?, now() + interval '20 seconds', 5000,
                now() - interval '500 milliseconds', now() + interval '1 day', DATE '1970-01-01')""", live, fingerprint,
        UUID.randomUUID());
    double inProgress = count("idempotency.in_progress");
    HttpResponse<String> busy = post("/orders", "t1", live, body);
    assertProblem(busy, 409, "in-progress");
    assertThat(count("idempotency.in_progress")).isEqualTo(inProgress + 1);
    assertThat(busy.headers().firstValue("Retry-After")).hasValue("5");
    assertThat(orders.runs("t1", live)).isZero();

    // a claim whose process crashed 2 minutes ago: its lease is over, the retry takes it over and runs
    String crashed = key();
    UUID deadOwner = UUID.randomUUID();
    double takeovers = count("idempotency.taken_over");
    jdbc.update("""
        INSERT INTO converge_idempotency_key (tenant, idem_key, fingerprint, method, path, status, lease_owner,
            leased_until, expected_ms, claimed_at, expires_at, day)
        VALUES ('t1', ?, ?, 'POST', '/orders', 'PROCESSING', ?, now() - interval '90 seconds', 3000,
                now() - interval '2 minutes', now() + interval '1 day', DATE '1970-01-01')""", crashed, fingerprint,
        deadOwner);
    HttpResponse<String> retried = post("/orders", "t1", crashed, body);
    assertThat(retried.statusCode()).isEqualTo(201);
    assertThat(orders.runs("t1", crashed)).isEqualTo(1);
    assertThat(count("idempotency.taken_over")).isEqualTo(takeovers + 1);
    Map<String, Object> row = jdbc.queryForMap(
        "SELECT status, lease_owner FROM converge_idempotency_key WHERE tenant = 't1' AND idem_key = ?", crashed);
    assertThat(row.get("status")).isEqualTo("COMPLETED");
    assertThat(row.get("lease_owner")).isNotEqualTo(deadOwner);
    assertThat(post("/orders", "t1", crashed, body).body()).isEqualTo(retried.body());

    // a late completion by the dead owner would change nothing: the compare-and-swap on the owner fails
    assertThat(jdbc.update("UPDATE converge_idempotency_key SET status = 'COMPLETED', response_status = 500 "
        + "WHERE tenant = 't1' AND idem_key = ? AND lease_owner = ? AND status = 'PROCESSING'", crashed, deadOwner))
        .isZero();
  }

  @Test
  void anExpiredKeyIsANewRequestAndIsPurged() throws Exception {
    String key = key();
    String kept = key();
    HttpResponse<String> first = post("/orders", "t1", key, "{\"amount\":7}");
    post("/orders", "t1", kept, "{\"amount\":7}");
    jdbc.update("UPDATE converge_idempotency_key SET expires_at = now() - interval '1 second' "
        + "WHERE tenant = 't1' AND idem_key = ?", key);

    HttpResponse<String> afterTtl = post("/orders", "t1", key, "{\"amount\":7}");
    assertThat(afterTtl.statusCode()).isEqualTo(201);
    assertThat(afterTtl.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(afterTtl.body()).isNotEqualTo(first.body());
    assertThat(orders.runs("t1", key)).isEqualTo(2);
    // even with another body: an expired key is free
    jdbc.update("UPDATE converge_idempotency_key SET expires_at = now() - interval '1 second' "
        + "WHERE tenant = 't1' AND idem_key = ?", key);

    IdempotencyKeyPurger purger = app.getBean(IdempotencyKeyPurger.class);
    // the catch-all's expired rows are deleted in batches; a day partition's go with their partition, dropped once
    // every key of it has expired (IdempotencyKeyPartitionsIT); which one holds the key depends on the tests before
    boolean inCatchAll = jdbc.queryForObject("SELECT tableoid::regclass::text = 'converge_idempotency_key_catchall'"
        + " FROM converge_idempotency_key WHERE idem_key = ?", Boolean.class, key);
    assertThat(purger.purgeExpired(10)).isGreaterThanOrEqualTo(inCatchAll ? 1 : 0);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_idempotency_key WHERE idem_key = ?", Long.class, key))
        .isEqualTo(inCatchAll ? 0 : 1);
    assertThat(
        jdbc.queryForObject("SELECT count(*) FROM converge_idempotency_key WHERE idem_key = ?", Long.class, kept))
        .isOne();
  }

  @Test
  void purgeDeletesInBoundedBatches(DataSource ds) {
    jdbc.update("""
        INSERT INTO converge_idempotency_key (tenant, idem_key, fingerprint, method, path, status, lease_owner,
            leased_until, expected_ms, claimed_at, expires_at, day)
        SELECT 'purge', 'k' || i, repeat('0', 64), 'POST', '/orders', 'COMPLETED', gen_random_uuid(), now(), 1,
               now() - interval '2 days', now() - interval '1 day', DATE '1970-01-01' FROM generate_series(1, 25) i""");
    IdempotencyKeyPurger small = new IdempotencyKeyPurger(ds, 10);
    assertThat(small.purgeExpired(2)).isEqualTo(20); // two batches of 10, then it stops
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_idempotency_key WHERE tenant = 'purge'", Long.class))
        .isEqualTo(5);
    assertThat(small.purgeExpired(100)).isGreaterThanOrEqualTo(5);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_idempotency_key WHERE tenant = 'purge'", Long.class))
        .isZero();
  }

  @Test
  void missingAndMalformedKeysAre400() throws Exception {
    double rejected = count("idempotency.rejected");
    assertProblem(post("/orders", "tm", null, "{}"), 400, "key-missing");
    assertProblem(post("/orders", "tm", "k".repeat(256), "{}"), 400, "key-invalid");
    // the JDK client replaces non-ASCII header bytes: send this one on a raw socket
    String raw = rawPost("/orders", "tm", "caf\u00e9-1".getBytes(StandardCharsets.ISO_8859_1), "{}");
    assertThat(raw).startsWith("HTTP/1.1 400").contains("urn:converge:idempotency:key-invalid")
        .contains("U+00E9 at index 3");
    HttpRequest twice = HttpRequest.newBuilder(URI.create(base + "/orders")).header("Content-Type", "application/json")
        .header("X-Tenant-Id", "tm").header("Idempotency-Key", "a").header("Idempotency-Key", "b")
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build();
    assertProblem(http.send(twice, HttpResponse.BodyHandlers.ofString()), 400, "key-invalid");
    assertThat(count("idempotency.rejected")).isEqualTo(rejected + 4);
    assertThat(orders.runs("tm", null)).isZero();
    // the longest legal key, and the IETF draft's quoted form of the same key
    String longest = "k".repeat(254) + UUID.randomUUID().toString().substring(0, 1);
    HttpResponse<String> ok = post("/orders", "tm", longest, "{}");
    assertThat(ok.statusCode()).isEqualTo(201);
    assertThat(post("/orders", "tm", "\"" + longest + "\"", "{}").headers().firstValue("Idempotent-Replayed"))
        .hasValue("true");
  }

  @Test
  void malformedOrOversizedJsonIsRefusedBeforeAnyClaim() throws Exception {
    String key = key();
    HttpResponse<String> r = post("/orders", "t1", key, "{\"amount\":100,}");
    assertProblem(r, 400, "body-invalid");
    assertThat(r.body()).contains("Invalid JSON body at offset 14");
    assertProblem(post("/orders", "t1", key, "[\"" + "x".repeat(70_000) + "\"]"), 413, "body-too-large");
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_idempotency_key WHERE idem_key = ?", Long.class, key))
        .isZero();
    // the key is still free: the corrected request runs
    assertThat(post("/orders", "t1", key, "{\"amount\":100}").statusCode()).isEqualTo(201);
  }

  @Test
  void optionalAndUnprotectedEndpointsRunWithoutAKey() throws Exception {
    assertThat(post("/optional", "t1", null, "{}").body()).startsWith("run ");
    assertThat(post("/optional", "t1", null, "{}").body()).startsWith("run ");
    assertThat(orders.runs("t1", null)).isEqualTo(2);
    String key = key();
    HttpResponse<String> first = post("/optional", "t1", key, "{}");
    assertThat(post("/optional", "t1", key, "{}").body()).isEqualTo(first.body());
    assertThat(orders.runs("t1", key)).isEqualTo(1);
  }

  @Test
  void serverErrorsAreStoredAndReplayedExactly() throws Exception {
    HttpResponse<String> replay = replayedOnce("/charges/unavailable", "{}", "{}", 503);
    assertThat(replay.body()).contains("acquirer down");
    assertThat(replay.headers().firstValue("Retry-After")).hasValue("7");

    String boom = key();
    HttpResponse<String> failed = post("/charges/boom", "t1", boom, "{}");
    assertProblem(failed, 500, "handler-failed");
    assertReplayed(post("/charges/boom", "t1", boom, "{}"), failed, 500);
    assertThat(orders.runs("t1", boom)).isEqualTo(1);
  }

  /**
   * Issue 19.2: a handler whose work was rolled back because something was unavailable (here a real Hikari
   * pool timeout under a Spring transaction) gets its key released and a 503, and the retry runs it.
   */
  @Test
  void anOutageInTheHandlerReleasesTheKeyAndTheRetryRuns() throws Exception {
    String key = key();
    HttpResponse<String> down = postWhilePoolIsTaken("/charges/pooled", key);
    assertProblem(down, 503, "handler-unavailable");
    assertThat(down.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_idempotency_key WHERE tenant = 't1' AND idem_key = ?",
        Long.class, key)).as("the key was released").isZero();
    HttpResponse<String> retry = post("/charges/pooled", "t1", key, "{}");
    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
    HttpResponse<String> replay = post("/charges/pooled", "t1", key, "{}");
    assertThat(replay.body()).isEqualTo(retry.body());
    assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(orders.runs("t1", key)).as("the failed run and the retry").isEqualTo(2);

    // the same when the application renders the outage itself (an @ExceptionHandler's 500)
    String rendered = key();
    HttpResponse<String> first = post("/charges/rendered", "t1", rendered, "{}");
    assertProblem(first, 503, "handler-unavailable");
    HttpResponse<String> again = post("/charges/rendered", "t1", rendered, "{}");
    assertThat(again.statusCode()).isEqualTo(201);
    assertThat(post("/charges/rendered", "t1", rendered, "{}").body()).isEqualTo(again.body());
    assertThat(orders.runs("t1", rendered)).isEqualTo(2);

    // a 500 the application answers on purpose is its answer: stored and replayed
    assertThat(replayedOnce("/charges/refused", "{}", "{}", 500).body()).contains("acquirer said no");
  }

  /**
   * A handler that committed work (a Spring transaction) and then failed on an outage (a real pool timeout) must not
   * get its key released: the retry would charge twice. Its failure is stored (500 handler-failed) and replayed.
   */
  @Test
  void anOutageAfterACommitIsStoredNotReleased() throws Exception {
    String key = key();
    HttpResponse<String> first = postWhilePoolIsTaken("/charges/charged-then-down", key);
    assertProblem(first, 500, "handler-failed");
    assertReplayed(post("/charges/charged-then-down", "t1", key, "{}"), first, 500);
    assertThat(orders.runs("t1", key)).as("the handler ran once").isEqualTo(1);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM cut_charge WHERE idem_key = ?", Long.class, key))
        .as("charged once").isEqualTo(1);
  }

  /**
   * A commit whose outcome is unknown (the connection broke during COMMIT) may have committed the business writes:
   * releasing the key would let the retry charge twice, storing a 500 would tell the client it failed when it may have
   * succeeded (the chaos soak's {@code 500 handler-failed} for a committed order). It is answered 503 outcome-unknown
   * with Retry-After = the lease, neither stored nor released: a retry meanwhile is 409 in-progress, and once the lease
   * is over the retry reads the claim's marker: here the backend died before COMMIT reached it, so it runs once.
   */
  @Test
  void aCommitWhoseOutcomeIsUnknownIsNeitherStoredNorReleased() throws Exception {
    // the application's manager bean: Converge's listener wrote the claim's marker in the transaction
    for (String manager : List.of("bean")) {
      String key = key();
      String path = "/charges/cut-" + manager;
      HttpResponse<String> first = post(path, "t1", key, "{}");
      assertProblem(first, 503, "outcome-unknown");
      assertThat(first.headers().firstValue("Retry-After")).as(manager).hasValue(Integer.toString(LEASE_SECONDS));
      assertProblem(post(path, "t1", key, "{}"), 409, "in-progress");
      assertThat(orders.runs("t1", key)).as(manager + ": the handler ran once").isEqualTo(1);
      assertThat(charges(key)).as(manager + ": the backend died before COMMIT reached it").isZero();
      assertThat(jdbc.update("UPDATE converge_idempotency_key SET leased_until = now() - interval '1 second' "
          + "WHERE tenant = 't1' AND idem_key = ? AND status = 'PROCESSING' AND work_committed_at IS NULL", key))
          .as(manager + ": the claim is kept, unmarked, nothing stored").isEqualTo(1);
      assertTheRetryChargesOnce(path, key);
    }
  }

  /**
   * Issue 31.1: a TxnProducer unit on the filter's data source whose COMMIT meets a dead connection, after which the
   * handler looks the charge up and that lookup fails on a pool timeout. The final exception is an ordinary outage, but
   * the unit may have committed: the key must be neither released (the retry would charge twice) nor stored. As for a
   * Spring commit of unknown outcome: 503 outcome-unknown, the claim kept for its lease, then its marker decides (here
   * the backend died before COMMIT reached it, so the retry runs once).
   */
  @Test
  void aUnitWhoseCommitOutcomeIsUnknownKeepsItsKeyWhateverFailsAfterIt() throws Exception {
    String path = "/charges/txn-cut";
    String key = key();
    HttpResponse<String> first = postWhilePoolIsTaken(path, key);
    assertProblem(first, 503, "outcome-unknown");
    assertThat(first.headers().firstValue("Retry-After")).hasValue(Integer.toString(LEASE_SECONDS));
    assertProblem(post(path, "t1", key, "{}"), 409, "in-progress");
    assertThat(orders.runs("t1", key)).as("the handler ran once").isEqualTo(1);
    assertThat(charges(key)).as("the backend died before COMMIT reached it").isZero();
    assertThat(jdbc.update("UPDATE converge_idempotency_key SET leased_until = now() - interval '1 second' "
        + "WHERE tenant = 't1' AND idem_key = ? AND status = 'PROCESSING' AND work_committed_at IS NULL", key))
        .as("the claim is kept, unmarked, nothing stored").isEqualTo(1);
    assertTheRetryChargesOnce(path, key);
  }

  /**
   * Issue 31.11: a response body over {@code max-response-size} (64KB here) is not held in memory nor stored: it is
   * streamed to the client as the handler writes it, in full, and the key answers its retries 409 answer-not-stored
   * (stored and replayed), without running the handler again. A body within the limit is stored and replayed as usual.
   */
  @Test
  void aResponseOverTheCaptureLimitIsSentInFullNotStored() throws Exception {
    String key = key();
    HttpResponse<String> first = large(key, 1 << 20);
    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.body()).hasSize(1 << 20).matches("x+");
    assertThat(orders.streamed.get(key)).as("sent while the handler wrote it, not held back").isTrue();
    HttpResponse<String> retry = large(key, 1 << 20);
    assertProblem(retry, 409, "answer-not-stored");
    assertReplayed(large(key, 1 << 20), retry, 409);
    assertThat(orders.runs("t1", key)).as("the handler ran once").isEqualTo(1);
    assertThat(jdbc.queryForObject("SELECT octet_length(response_body) FROM converge_idempotency_key "
        + "WHERE tenant = 't1' AND idem_key = ?", Integer.class, key)).as("only the problem is stored")
        .isLessThan(1000);

    String within = key();
    HttpResponse<String> stored = large(within, 64 * 1024);
    assertThat(stored.statusCode()).isEqualTo(201);
    assertThat(orders.streamed.get(within)).as("held back until stored").isFalse();
    assertReplayed(large(within, 64 * 1024), stored, 201);
  }

  private static HttpResponse<String> large(String key, int bytes) throws Exception {
    return IdempotentCalls.post(base + "/charges/large", "application/json", "{}", "X-Tenant-Id", "t1",
        "Idempotency-Key", key, "X-Bytes", Integer.toString(bytes));
  }

  /**
   * A commit of unknown outcome that wrote no marker (its transaction manager is no Spring bean, so Converge's
   * listener never saw it): nothing could tell a retry whether the work committed, so the 500 is stored and replayed,
   * and the handler never runs again (it would charge twice had the COMMIT reached the server).
   */
  @Test
  void anUnmarkedCommitWhoseOutcomeIsUnknownIsStoredNeverRunAgain() throws Exception {
    assertFailureStoredAndReplayed("/charges/cut-plain", key());
  }

  /**
   * A COMMIT the database answered with an error (a deferred unique constraint checked at commit) rolled the work
   * back: its outcome is known. Its 500 is the key's answer, stored and replayed, not a 503 that would send every
   * retry, one lease later, into the same failure for ever.
   */
  @Test
  void aCommitTheDatabaseRefusedIsAKnownFailureStoredAndReplayed() throws Exception {
    String key = key();
    assertFailureStoredAndReplayed("/charges/refused-at-commit", key);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM cut_deferred WHERE idem_key = ?", Long.class, key))
        .as("the refused commit wrote nothing").isZero();
  }

  /**
   * The first request answers {@code 500 handler-failed}; a retry one lease later (the claim's lease ended as if it
   * had passed) gets the same answer replayed, and the handler ran once.
   */
  private void assertFailureStoredAndReplayed(String path, String key) throws Exception {
    HttpResponse<String> first = post(path, "t1", key, "{}");
    assertProblem(first, 500, "handler-failed");
    jdbc.update("UPDATE converge_idempotency_key SET leased_until = now() - interval '1 second' "
        + "WHERE tenant = 't1' AND idem_key = ?", key);
    HttpResponse<String> retry = post(path, "t1", key, "{}");
    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(500);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(orders.runs("t1", key)).as(path + ": the handler ran once").isEqualTo(1);
  }

  /**
   * While the key is in {@code cut_store_down}, the database refuses to store its answer (a connection-failure
   * error, as when PostgreSQL crash-restarts between the handler's commit and the store): the claim stays in
   * progress.
   */
  private static void storeDown(String key) {
    jdbc.execute("CREATE TABLE IF NOT EXISTS cut_store_down (idem_key text PRIMARY KEY)");
    jdbc.execute("""
        CREATE OR REPLACE FUNCTION cut_store_down() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.status = 'COMPLETED' AND EXISTS (SELECT 1 FROM cut_store_down d WHERE d.idem_key = NEW.idem_key) THEN
            RAISE EXCEPTION 'the key store went away' USING ERRCODE = '08006';
          END IF;
          RETURN NEW;
        END $$""");
    jdbc.execute("DROP TRIGGER IF EXISTS cut_store_down ON converge_idempotency_key");
    jdbc.execute("CREATE TRIGGER cut_store_down BEFORE UPDATE ON converge_idempotency_key FOR EACH ROW "
        + "EXECUTE FUNCTION cut_store_down()");
    jdbc.update("INSERT INTO cut_store_down VALUES (?)", key);
  }

  /** The store is back, and the lease of the key's claim (left in progress) is over: a retry may take it over. */
  private static void storeBackAndLeaseOver(String key) {
    jdbc.update("DELETE FROM cut_store_down WHERE idem_key = ?", key);
    assertThat(jdbc.update("UPDATE converge_idempotency_key SET leased_until = now() - interval '1 second' "
        + "WHERE tenant = 't1' AND idem_key = ? AND status = 'PROCESSING'", key))
        .as("the answer was not stored: the claim is still in progress").isEqualTo(1);
  }

  private static long charges(String key) {
    return jdbc.queryForObject("SELECT count(*) FROM cut_charge WHERE idem_key = ?", Long.class, key);
  }

  /**
   * The chaos run's "charged twice": the handler's transaction committed, then its answer could not be stored, and
   * one lease later a retry took the claim over and ran the handler again. The marker written in the handler's own
   * transaction tells the retry that the work was done: 409 answer-lost, stored and replayed, never a second run.
   */
  @Test
  void committedWorkWhoseAnswerWasLostIsNeverRunAgain() throws Exception {
    // a Spring transaction (the application's manager bean), and a TxnProducer unit of work
    for (String path : List.of("/charges/committed", "/charges/txn")) {
      String key = key();
      storeDown(key);
      HttpResponse<String> first = post(path, "t1", key, "{}");
      assertThat(first.statusCode()).as(path + ": " + first.body()).isEqualTo(201);
      storeBackAndLeaseOver(key);
      HttpResponse<String> retry = post(path, "t1", key, "{}");
      HttpResponse<String> again = post(path, "t1", key, "{}");
      assertThat(orders.runs("t1", key)).as(path + ": the handler ran once: a second run charges twice").isEqualTo(1);
      assertThat(charges(key)).as(path + ": charged once").isEqualTo(1);
      assertProblem(retry, 409, "answer-lost");
      assertReplayed(again, retry, 409);
    }
  }

  /** Work that rolled back leaves no marker: its lost answer is no obstacle, the retry after the lease runs once. */
  @Test
  void rolledBackWorkWhoseAnswerWasLostRunsAgainAfterTheLease() throws Exception {
    String key = key();
    storeDown(key);
    assertProblem(post("/charges/rolled-back", "t1", key, "{}"), 500, "handler-failed");
    storeBackAndLeaseOver(key);
    assertTheRetryChargesOnce("/charges/rolled-back", key);
  }

  /**
   * The database connection died during the handler's transaction, so its rollback failed on the dead connection: no
   * commit was attempted, this is an outage: 503, the key released, and the retry runs once. With a JDBC transaction
   * manager (Spring's TransactionSystemException), and under JPA as the chaos soak met it (Hibernate on HikariCP: a
   * JpaSystemException "Unable to rollback against JDBC Connection" over HikariCP's "Connection is closed").
   */
  @Test
  void aRollbackThatFailsOnADeadConnectionIsAnOutage() throws Exception {
    for (String path : List.of("/charges/crash-plain", "/charges/crash-jpa")) {
      String key = key();
      assertProblem(post(path, "t1", key, "{}"), 503, "handler-unavailable");
      assertTheRetryChargesOnce(path, key);
    }
  }

  /** After a failed first run of {@code key} on {@code path}: the retry charges (201), once, and is replayed. */
  private void assertTheRetryChargesOnce(String path, String key) throws Exception {
    HttpResponse<String> retry = post(path, "t1", key, "{}");
    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
    assertReplayed(post(path, "t1", key, "{}"), retry, 201);
    assertThat(orders.runs("t1", key)).as("the failed run and the retry").isEqualTo(2);
    assertThat(charges(key)).as("charged once, by the retry").isEqualTo(1);
  }

  @Test
  void anAsynchronousHandlerFailsAtOnceInsteadOfStoringAWrongAnswer() throws Exception {
    String key = key();
    HttpResponse<String> first = post("/charges/async", "t1", key, "{}");
    assertProblem(first, 500, "handler-failed");
    HttpResponse<String> retry = post("/charges/async", "t1", key, "{}");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(orders.runs("t1", key)).as("the Callable never ran").isZero();
  }

  /**
   * Issue 13.7: the filter matched the raw request URI, so {@code POST /orders;a=1} ran without a key and
   * twice with one. Every spelling that Tomcat or Spring MVC routes to a protected handler is protected:
   * path parameters, percent-encoded characters, dot segments, double and trailing slashes.
   */
  @Test
  void everySpellingOfAProtectedPathIsProtected() throws Exception {
    List<String> variants = List.of("/orders;a=1", "/orders;", "/ord%65rs", "//orders", "/x/../orders",
        "/./orders", "/%2e/orders", "/orders/", "/annotated/9;a=1", "/annotated;v=1/9", "/annot%61ted/9",
        "/annotated//9", "//annotated/9", "/annotated/x/../9", "/annotated/./9", "/annotated/%2e/9", "/annotated/..",
        "/annotated/%2e%2e", "/annotated/%2E%2E;x", "/annotated/%0A", "/annotated/9/");
    for (String v : variants) {
      Raw none = raw(v, "tv", null, "{}");
      assertThat(none.status()).as("%s without a key: %s", v, none.body()).isEqualTo(400);
      assertThat(none.body()).as(v).contains("urn:converge:idempotency:key-missing");
      assertThat(orders.runs("tv", null)).as("%s ran without a key", v).isZero();
      String key = key();
      Raw first = raw(v, "tv", key, "{}");
      Raw second = raw(v, "tv", key, "{}");
      assertThat(second.body()).as("%s replayed", v).isEqualTo(first.body());
      assertThat(second.head()).as(v).contains("Idempotent-Replayed: true");
      assertThat(orders.runs("tv", key)).as("%s with one key twice", v).isLessThanOrEqualTo(1);
    }
    // the routed handler ran for these spellings, and only once
    for (String v : List.of("/orders;a=1", "/ord%65rs", "/annotated/9;a=1", "/annot%61ted/9", "/annotated/..")) {
      String key = key();
      assertThat(raw(v, "tv", key, "{}").status()).as(v).isBetween(200, 201);
      raw(v, "tv", key, "{}");
      assertThat(orders.runs("tv", key)).as(v).isEqualTo(1);
    }
    // a spelling and the canonical path are one request: the fingerprint uses the routed path
    String key = key();
    Raw canonical = raw("/annotated/9", "tv", key, "{}");
    for (String v : List.of("/annotated/9;a=1", "/annot%61ted/9", "//annotated/9", "/annotated/x/../9")) {
      Raw again = raw(v, "tv", key, "{}");
      assertThat(again.head()).as(v).contains("Idempotent-Replayed: true");
      assertThat(again.body()).as(v).isEqualTo(canonical.body());
    }
    assertThat(orders.runs("tv", key)).isEqualTo(1);
    // an encoded slash is refused by Tomcat before any filter or handler; another case is another path (404)
    assertThat(raw("/orders%2Fx", "tv", null, "{}").status()).isEqualTo(400);
    assertThat(raw("/ORDERS", "tv", null, "{}").status()).isEqualTo(404);
    assertThat(raw("/orders%3Bx", "tv", null, "{}").status()).as("an encoded ';' is part of the name").isEqualTo(404);
    assertThat(orders.runs("tv", null)).isZero();
  }

  /**
   * Issue 31.5: {@code @Idempotent} patterns beyond whole-segment variables (a custom method's
   * {@code {id}:refund}, a {@code {*path}} capture) are read as Spring MVC reads them: a retry replays, the
   * handler runs once, a request without a key is refused. (Not under {@code /charges/*}, which the
   * configured endpoints already protect.)
   */
  @Test
  void aCustomMethodAndACaptureOfTheRestRunTheirHandlerOnce() throws Exception {
    for (String path : List.of("/v1/charges/ch_1:refund", "/v1/files/statements/2024/03.csv",
        "/v1/charges/ch_2:refund;v=1", "/v1/charges/ch%5F3:refund", "/v1/files/a//b/")) {
      replayedOnce(path, "{}", "{}", 200);
      assertProblem(post(path, "t1", null, "{}"), 400, "key-missing");
    }
  }

  @Test
  void idempotentAnnotatedHandlerMethodIsProtected() throws Exception {
    assertProblem(post("/annotated/9", "t1", null, "{}"), 400, "key-missing");
    String key = key();
    HttpResponse<String> first = post("/annotated/9", "t1", key, "{}");
    HttpResponse<String> retry = post("/annotated/9", "t1", key, "{}");
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(orders.runs("t1", key)).isEqualTo(1);
  }
}
