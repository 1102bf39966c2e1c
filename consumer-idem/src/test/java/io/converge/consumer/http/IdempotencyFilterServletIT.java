package io.converge.consumer.http;

import static io.converge.consumer.http.IdempotentCalls.assertReplayed;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.core.Migrations;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.catalina.LifecycleException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The filter without Spring: built with its builder and mounted on a bare embedded Tomcat in front
 * of a plain servlet, on the embedded PostgreSQL; plus one context whose database refuses connections.
 */
@ExtendWith(PostgresExtension.class)
class IdempotencyFilterServletIT {

  private static BareTomcat tomcat;
  private static String base;
  private static final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

  /** Counts its runs per key; what it answers depends on the path. */
  static final class Shop extends HttpServlet {

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      int run = runs.computeIfAbsent(String.valueOf(req.getHeader("Idempotency-Key")), k -> new AtomicInteger())
          .incrementAndGet();
      switch (req.getPathInfo()) {
        case "/pay" -> {
          String body = new String(req.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
          resp.setStatus(201);
          resp.setContentType("application/json");
          resp.getWriter().write("{\"run\":" + run + ",");
          resp.flushBuffer(); // held back by the filter until the response is stored
          resp.getWriter().write("\"echo\":" + body + "}");
        }
        case "/declined" -> resp.sendError(402, "card declined");
        case "/redirect" -> resp.sendRedirect("/shop/pay/" + run);
        case "/form" -> resp.getWriter().write("amount=" + req.getParameter("amount") + " run=" + run);
        case "/slower", "/slow" -> {
          awaitGate(req.getHeader("Idempotency-Key")); // runs until the test lets it finish
          resp.setStatus(201);
          resp.getWriter().write(req.getPathInfo().substring(1) + " run=" + run);
        }
        default -> resp.sendError(404);
      }
    }
  }

  /** Gates of the slow handlers, per key: a handler runs until the test opens its gate (60 s at most). */
  private static final Map<String, java.util.concurrent.CountDownLatch> gates = new ConcurrentHashMap<>();

  private static java.util.concurrent.CountDownLatch gate(String key) {
    return gates.computeIfAbsent(String.valueOf(key), k -> new java.util.concurrent.CountDownLatch(1));
  }

  private static void awaitGate(String key) {
    try {
      gate(key).await(60, java.util.concurrent.TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The lease of the short-lease instances: long enough that a stalled (loaded) machine does not lose a renewal. */
  private static final Duration LEASE = Duration.ofSeconds(5);

  /**
   * Waits (by the database's clock) until {@code key}'s claim is older than {@code leases} leases plus a second: a
   * claim that was not renewed would have lapsed by then.
   */
  private static void awaitLeasesPast(String key, double leases) {
    long ms = (long) (LEASE.toMillis() * leases) + 1000;
    org.awaitility.Awaitility.await().atMost(Duration.ofMillis(ms + 20_000)).pollInterval(Duration.ofMillis(200))
        .until(() -> {
          try (java.sql.Connection c = db.getConnection();
              java.sql.PreparedStatement ps = c.prepareStatement(
                  "SELECT now() > claimed_at + ? * interval '1 millisecond' FROM converge_idempotency_key WHERE idem_key = ?")) {
            ps.setLong(1, ms);
            ps.setString(2, key);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
              return rs.next() && rs.getBoolean(1);
            }
          }
        });
  }

  private static DataSource db;
  /** The pool of the "busy" instance: two connections, a 250 ms wait for one. */
  private static com.zaxxer.hikari.HikariDataSource busyPool;

  private static IdempotencySettings shortLease() {
    return new IdempotencySettings(IdempotencySettings.DEFAULT_TTL, LEASE,
        IdempotencySettings.DEFAULT_KEY_HEADER, IdempotencySettings.DEFAULT_REPLAYED_HEADERS, List.of(),
        IdempotencySettings.DEFAULT_MAX_BODY_BYTES);
  }

  @BeforeAll
  @SuppressWarnings("deprecation") // clock(): the skewed instances show that it no longer decides anything
  static void start(DataSource ds) throws Exception {
    db = ds;
    Migrations.apply(ds, "idempotency");
    List<IdempotentEndpoint> all = List.of(IdempotentEndpoint.of("POST", "/**"));
    com.zaxxer.hikari.HikariConfig pool = new com.zaxxer.hikari.HikariConfig();
    pool.setDataSource(ds);
    pool.setMaximumPoolSize(2);
    pool.setConnectionTimeout(250);
    busyPool = new com.zaxxer.hikari.HikariDataSource(pool);
    List<IdempotentEndpoint> quick = List
        .of(IdempotentEndpoint.of("POST", "/**").withExpectedDuration(Duration.ofMillis(500)));
    tomcat = new BareTomcat()
        .mount("/shop", IdempotencyFilter.builder().dataSource(ds).tenantResolver(TenantResolver.fixed("shop"))
            .endpoints(all).build(), new Shop())
        .mount("/down", IdempotencyFilter.builder().dataSource(refusing()).tenantResolver(TenantResolver.fixed("shop"))
            .endpoints(all).build(), new Shop())
        .mount("/short", IdempotencyFilter.builder().dataSource(ds).tenantResolver(TenantResolver.fixed("shop"))
            .settings(shortLease())
            .endpoints(List.of(IdempotentEndpoint.of("POST", "/**").withExpectedDuration(Duration.ofMillis(500))))
            .build(), new Shop())
        .mount("/busy", IdempotencyFilter.builder().dataSource(busyPool).tenantResolver(TenantResolver.fixed("shop"))
            .settings(shortLease()).endpoints(quick).build(), new Shop())
        .mount("/ahead", IdempotencyFilter.builder().dataSource(ds).tenantResolver(TenantResolver.fixed("shop"))
            .clock(java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofMinutes(10))).endpoints(all).build(),
            new Shop())
        .mount("/behind", IdempotencyFilter.builder().dataSource(ds).tenantResolver(TenantResolver.fixed("shop"))
            .clock(java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofMinutes(-10))).endpoints(all).build(),
            new Shop())
        .start();
    base = tomcat.base();
  }

  /** A real PostgreSQL data source pointing at a port nobody listens on. */
  private static DataSource refusing() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setServerNames(new String[]{"127.0.0.1"});
    ds.setPortNumbers(new int[]{port});
    ds.setDatabaseName("postgres");
    ds.setConnectTimeout(2);
    return ds;
  }

  @AfterAll
  static void stop() throws LifecycleException {
    if (tomcat != null) {
      tomcat.close();
    }
    if (busyPool != null) {
      busyPool.close();
    }
  }

  private static HttpResponse<String> post(String path, String key, String contentType, String body) throws Exception {
    return IdempotentCalls.post(base + path, contentType, body, "Idempotency-Key", key);
  }

  private static HttpResponse<String> post(String path, String key) throws Exception {
    return post(path, key, "application/json", "{}");
  }

  /** The same request twice under one new key: the key, the first answer and the retry's. */
  private record Twice(String key, HttpResponse<String> first, HttpResponse<String> retry) {

    /** Asserts that both answered {@code status} and that the handler ran once. */
    Twice answered(int status) {
      assertThat(first.statusCode()).isEqualTo(status);
      assertThat(retry.statusCode()).isEqualTo(status);
      assertThat(runsOf(key)).isEqualTo(1);
      return this;
    }
  }

  private static Twice twice(String path, String contentType, String body, String retryBody) throws Exception {
    String key = UUID.randomUUID().toString();
    return new Twice(key, post(path, key, contentType, body), post(path, key, contentType, retryBody));
  }

  private static int runsOf(String key) {
    AtomicInteger n = runs.get(key);
    return n == null ? 0 : n.get();
  }

  @Test
  void aLiveHandlerSlowerThanItsLeaseKeepsItsKey() throws Exception {
    String key = UUID.randomUUID().toString();
    java.util.concurrent.CompletableFuture<HttpResponse<String>> first = postAsync("/short/slow", key);
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> claimed(key));
    // retries past one and past two leases of the claim, which its heartbeat renews
    for (double leases : new double[]{1, 2}) {
      awaitLeasesPast(key, leases);
      HttpResponse<String> retry = post("/short/slow", key);
      assertThat(retry.statusCode()).as("a retry while the first runs, body %s", retry.body()).isEqualTo(409);
      assertThat(retry.headers().firstValue("Retry-After")).isPresent();
    }
    gate(key).countDown();
    HttpResponse<String> done = first.get(30, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(done.statusCode()).isEqualTo(201);
    assertThat(done.body()).isEqualTo("slow run=1");
    HttpResponse<String> replay = post("/short/slow", key);
    assertThat(replay.body()).isEqualTo("slow run=1");
    assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(runsOf(key)).as("the handler ran once").isEqualTo(1);
  }

  private static java.util.concurrent.CompletableFuture<HttpResponse<String>> postAsync(String path, String key) {
    return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
      try {
        return post(path, key);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  private static boolean claimed(String key) throws java.sql.SQLException {
    try (java.sql.Connection c = db.getConnection();
        java.sql.PreparedStatement ps = c
            .prepareStatement("SELECT count(*) FROM converge_idempotency_key WHERE idem_key = ?")) {
      ps.setString(1, key);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) == 1;
      }
    }
  }

  private static void sql(String sql, Object... args) throws java.sql.SQLException {
    try (java.sql.Connection c = db.getConnection(); java.sql.PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      ps.execute();
    }
  }

  /**
   * Issue 13.8: renewals took their connection from the application's pool; with the pool exhausted they
   * waited and failed, the lease ran out, and a retry on another instance ran the handler a second time.
   */
  @Test
  void anExhaustedPoolDoesNotStarveTheLeaseOfARunningHandler() throws Exception {
    String key = UUID.randomUUID().toString();
    java.util.concurrent.CompletableFuture<HttpResponse<String>> first = postAsync("/busy/slower", key);
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> claimed(key));
    List<java.sql.Connection> load = new java.util.ArrayList<>();
    try {
      // the application's own load takes every connection its pool will give
      while (true) {
        try {
          load.add(busyPool.getConnection());
        } catch (java.sql.SQLException exhausted) {
          break;
        }
      }
      assertThat(busyPool.getHikariPoolMXBean().getIdleConnections()).isZero();
      awaitLeasesPast(key, 1); // the claim's lease lapses unless the keeper renews it
      // the client's retry reaches a healthy instance while the first handler still runs
      HttpResponse<String> retry = post("/shop/slower", key);
      assertThat(retry.statusCode()).as("retry while the first runs: %s", retry.body()).isEqualTo(409);
    } finally {
      for (java.sql.Connection c : load) {
        c.close();
      }
      gate(key).countDown();
    }
    HttpResponse<String> done = first.get(30, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(done.statusCode()).isEqualTo(201);
    assertThat(post("/shop/slower", key).body()).isEqualTo(done.body());
    assertThat(runsOf(key)).as("the handler ran once").isEqualTo(1);
  }

  /** Issue 13.8: leases and expiry were timed with each instance's clock; the database's clock decides now. */
  @Test
  void anInstanceWhoseClockIsOffNeitherTakesOverALiveLeaseNorKeepsADeadOne() throws Exception {
    // a live handler (short lease, renewed) and an instance 10 minutes ahead
    String live = UUID.randomUUID().toString();
    java.util.concurrent.CompletableFuture<HttpResponse<String>> first = postAsync("/short/slower", live);
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> claimed(live));
    HttpResponse<String> ahead = post("/ahead/slower", live);
    assertThat(ahead.statusCode()).as("a retry on the instance ahead: %s", ahead.body()).isEqualTo(409);
    gate(live).countDown();
    HttpResponse<String> done = first.get(30, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(done.statusCode()).isEqualTo(201);
    // a key 5 minutes before its expiry is replayed by the instance ahead, not run again
    sql("UPDATE converge_idempotency_key SET expires_at = now() + interval '5 minutes' WHERE idem_key = ?", live);
    HttpResponse<String> replay = post("/ahead/slower", live);
    assertThat(replay.body()).isEqualTo(done.body());
    assertThat(runsOf(live)).isEqualTo(1);

    // a claim whose process died 2 minutes ago (lease over 90 s ago by the database's clock), and an
    // instance 10 minutes behind: it takes the claim over
    String probe = UUID.randomUUID().toString();
    post("/shop/pay", probe);
    String dead = UUID.randomUUID().toString();
    sql("""
        INSERT INTO converge_idempotency_key (tenant, idem_key, fingerprint, method, path, status, lease_owner,
            leased_until, expected_ms, claimed_at, expires_at, day)
        SELECT tenant, ?, fingerprint, method, path, 'PROCESSING', gen_random_uuid(), now() - interval '90 seconds',
               2000, now() - interval '2 minutes', now() + interval '1 day', day
          FROM converge_idempotency_key WHERE idem_key = ?""", dead, probe);
    HttpResponse<String> behind = post("/behind/pay", dead);
    assertThat(behind.statusCode()).as("a retry on the instance behind: %s", behind.body()).isEqualTo(201);
    assertThat(runsOf(dead)).isEqualTo(1);
  }

  @Test
  void theQueryStringIsPartOfTheRequest() throws Exception {
    String key = UUID.randomUUID().toString();
    HttpResponse<String> first = post("/shop/pay?currency=EUR&split=2", key, "application/json", "{\"amount\":5}");
    assertThat(first.statusCode()).isEqualTo(201);
    HttpResponse<String> reordered = post("/shop/pay?split=%32&currency=EUR", key, "application/json",
        "{\"amount\":5}");
    assertThat(reordered.body()).isEqualTo(first.body());
    assertThat(reordered.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    HttpResponse<String> other = post("/shop/pay?currency=USD&split=2", key, "application/json", "{\"amount\":5}");
    assertThat(other.statusCode()).isEqualTo(422);
    HttpResponse<String> none = post("/shop/pay", key, "application/json", "{\"amount\":5}");
    assertThat(none.statusCode()).isEqualTo(422);
    assertThat(runsOf(key)).isEqualTo(1);
  }

  @Test
  void aFlushedBodyIsHeldBackStoredAndReplayed() throws Exception {
    Twice t = twice("/shop/pay", "application/json", "{\"amount\":12000}", "{\"amount\":1.2e4}").answered(201);
    assertThat(t.first().body()).isEqualTo("{\"run\":1,\"echo\":{\"amount\":12000}}");
    assertReplayed(t.retry(), t.first(), 201);
    assertThat(t.retry().headers().firstValue("Content-Type"))
        .isEqualTo(t.first().headers().firstValue("Content-Type"));
  }

  @Test
  void sendErrorIsStoredAsAProblemAndReplayed() throws Exception {
    Twice t = twice("/shop/declined", "application/json", "{}", "{}").answered(402);
    assertThat(t.first().headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(t.first().body()).contains("\"status\":402").contains("\"detail\":\"card declined\"");
    assertThat(t.retry().body()).isEqualTo(t.first().body());
  }

  @Test
  void aRedirectIsReplayedWithItsLocation() throws Exception {
    Twice t = twice("/shop/redirect", "text/plain", "x", "x").answered(302);
    assertThat(t.retry().headers().firstValue("Location")).isEqualTo(t.first().headers().firstValue("Location"))
        .hasValueSatisfying(l -> assertThat(l).endsWith("/shop/pay/1"));
  }

  @Test
  void formParametersReachTheHandlerAndMakeTheFingerprint() throws Exception {
    String key = UUID.randomUUID().toString();
    String form = "application/x-www-form-urlencoded";
    HttpResponse<String> first = post("/shop/form", key, form, "currency=CNY&amount=5");
    assertThat(first.body()).isEqualTo("amount=5 run=1");
    assertThat(post("/shop/form", key, form, "amount=5&currency=CNY").body()).isEqualTo(first.body());
    HttpResponse<String> other = post("/shop/form", key, form, "amount=6&currency=CNY");
    assertThat(other.statusCode()).isEqualTo(422);
    assertThat(runsOf(key)).isEqualTo(1);
  }

  @Test
  void anUnreachableDatabaseIs503AndTheHandlerDoesNotRun() throws Exception {
    String key = UUID.randomUUID().toString();
    HttpResponse<String> r = post("/down/pay", key);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(r.body()).contains("urn:converge:idempotency:store-unavailable").doesNotContain("detail");
    assertThat(runsOf(key)).isZero();
  }
}
