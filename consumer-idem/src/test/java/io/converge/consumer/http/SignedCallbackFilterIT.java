package io.converge.consumer.http;

import static io.converge.consumer.http.IdempotentCalls.assertReplayed;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.core.Migrations;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.apache.catalina.LifecycleException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Signed callbacks (issue 34.3) on a bare embedded Tomcat in front of a plain servlet, on the embedded PostgreSQL:
 * forged, stale and malformed callbacks are refused before the handler, and a copy of a verified one gets the first
 * answer from the Idempotency-Key store without running the handler again.
 */
@ExtendWith(PostgresExtension.class)
class SignedCallbackFilterIT {

  private static final String CURRENT = "whsec_current";
  private static final String PREVIOUS = "whsec_previous";
  /** The active secrets; a test rotates them. */
  private static final AtomicReference<List<String>> secrets = new AtomicReference<>(List.of(CURRENT, PREVIOUS));
  /** The handler's runs per event id (the body's {@code id}). */
  private static final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  /** The refusals counted per reason. */
  private static final Map<CallbackProblem, AtomicInteger> refusals = new ConcurrentHashMap<>();
  private static final AtomicInteger replays = new AtomicInteger();

  private static BareTomcat tomcat;
  private static String base;
  private static DataSource db;

  /** Echoes the body it reads and how many times it ran for the body's event. */
  static final class Provider extends HttpServlet {

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      String body = new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      String event = body.replaceAll(".*\"id\":\"([^\"]*)\".*", "$1");
      int run = runs.computeIfAbsent(event, k -> new AtomicInteger()).incrementAndGet();
      if (event.startsWith("slow")) {
        try {
          Thread.sleep(300);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      resp.setStatus(200);
      resp.setContentType("application/json");
      resp.getWriter().write("{\"run\":" + run + ",\"echo\":" + body + ",\"key\":\""
          + req.getAttribute(IdempotencyFilter.KEY_ATTRIBUTE) + "\"}");
    }
  }

  @BeforeAll
  static void start(DataSource ds) throws Exception {
    db = ds;
    Migrations.apply(ds, "idempotency");
    CallbackMetrics metrics = new CallbackMetrics() {

      @Override
      public void verified(String endpoint) {
      }

      @Override
      public void refused(String endpoint, CallbackProblem problem) {
        refusals.computeIfAbsent(problem, p -> new AtomicInteger()).incrementAndGet();
      }

      @Override
      public void replayed(String endpoint) {
        replays.incrementAndGet();
      }
    };
    tomcat = new BareTomcat()
        .mount("/psp", SignedCallbackFilter.builder().dataSource(ds).provider("acme-pay")
            .secrets(() -> secrets.get().stream().map(s -> s.getBytes(StandardCharsets.UTF_8)).toList())
            .endpoints(List.of(IdempotentEndpoint.of("POST", "/payments/{id}/provider-callback")))
            .settings(CallbackSettings.defaults().withMaxBodyBytes(1024)).metrics(metrics).build(), new Provider())
        .start();
    base = tomcat.base() + "/psp";
  }

  @AfterAll
  static void stop() throws LifecycleException {
    if (tomcat != null) {
      tomcat.close();
    }
  }

  private static String event(String id) {
    return "{\"id\":\"" + id + "\",\"type\":\"payment.confirmed\"}";
  }

  private static String sign(String secret, long t, String body) {
    return SignedCallbackFilter.sign(secret.getBytes(StandardCharsets.UTF_8), t, body.getBytes(StandardCharsets.UTF_8));
  }

  private static long now() {
    return Instant.now().getEpochSecond();
  }

  private static HttpResponse<String> callback(String path, String body, String... headers) throws Exception {
    return IdempotentCalls.post(base + path, "application/json", body, headers);
  }

  private static HttpResponse<String> signed(String body, String signature) throws Exception {
    return callback("/payments/p-1/provider-callback", body, "Converge-Signature", signature);
  }

  private static int runsOf(String event) {
    AtomicInteger n = runs.get(event);
    return n == null ? 0 : n.get();
  }

  @Test
  void aVerifiedCallbackRunsOnceAndEveryCopyGetsTheFirstAnswer() throws Exception {
    String id = "evt-" + UUID.randomUUID();
    String body = event(id);
    long t = now();
    String header = sign(CURRENT, t, body);
    HttpResponse<String> first = signed(body, header);
    assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
    assertThat(first.body()).contains("\"run\":1", "\"echo\":" + body); // the handler read the body the filter read
    assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
    int replaysBefore = replays.get();

    assertReplayed(signed(body, header), first, 200);
    // the same callback however its header is written: entries reordered, the rotated secret's entry added
    assertReplayed(signed(body, "v1=" + sign(PREVIOUS, t, body).substring(("t=" + t + ",v1=").length()) + ", t="
        + t + ",v1=" + header.substring(header.indexOf("v1=") + 3)), first, 200);
    assertThat(runsOf(id)).isEqualTo(1);
    assertThat(replays.get() - replaysBefore).isEqualTo(2);
    // one row, under the provider's tenant, keyed by the signed text's digest (not a second store)
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT count(*), min(tenant), min(idem_key) FROM converge_idempotency_key WHERE idem_key = ?")) {
      ps.setString(1, first.body().replaceAll(".*\"key\":\"([^\"]*)\".*", "$1"));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(1);
        assertThat(rs.getString(2)).isEqualTo("callback:acme-pay");
        assertThat(rs.getString(3)).startsWith("cb-").hasSize(3 + 64);
      }
    }
  }

  @Test
  void concurrentCopiesRunTheHandlerOnce() throws Exception {
    String id = "slow-" + UUID.randomUUID();
    String body = event(id);
    String header = sign(CURRENT, now(), body);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<HttpResponse<String>>> answers = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        answers.add(pool.submit((Callable<HttpResponse<String>>) () -> signed(body, header)));
      }
      for (Future<HttpResponse<String>> a : answers) {
        assertThat(a.get().statusCode()).as(a.get().body()).isIn(200, 409);
      }
    } finally {
      pool.shutdown();
    }
    assertThat(runsOf(id)).isEqualTo(1);
  }

  @Test
  void aForgedCallbackIs401AndNeverRuns() throws Exception {
    String id = "evt-" + UUID.randomUUID();
    String body = event(id);
    int before = count(CallbackProblem.SIGNATURE_MISMATCH);
    HttpResponse<String> forged = signed(body, sign("whsec_guessed", now(), body));
    assertProblem(forged, 401, "signature-mismatch");
    assertThat(forged.body()).doesNotContain(CURRENT).doesNotContain(PREVIOUS);
    // a real signature over another body (the amount changed in flight)
    String genuine = sign(CURRENT, now(), event("other"));
    assertProblem(signed(body, genuine), 401, "signature-mismatch");
    assertThat(runsOf(id)).isZero();
    assertThat(count(CallbackProblem.SIGNATURE_MISMATCH) - before).isEqualTo(2);
  }

  @Test
  void aTimestampOutsideTheToleranceEitherWayIs400AndNeverRuns() throws Exception {
    String id = "evt-" + UUID.randomUUID();
    String body = event(id);
    HttpResponse<String> stale = signed(body, sign(CURRENT, now() - 330, body));
    assertProblem(stale, 400, "timestamp-out-of-tolerance");
    assertThat(stale.body()).contains("behind the server's clock; the tolerance is 300 s either way");
    HttpResponse<String> ahead = signed(body, sign(CURRENT, now() + 330, body));
    assertProblem(ahead, 400, "timestamp-out-of-tolerance");
    assertThat(ahead.body()).contains("ahead of the server's clock");
    assertThat(runsOf(id)).isZero();
    // within the tolerance, behind or ahead (clock skew): verified
    assertThat(signed(body, sign(CURRENT, now() - 270, body)).statusCode()).isEqualTo(200);
    assertThat(signed(body, sign(CURRENT, now() + 270, body)).statusCode()).isEqualTo(200);
    assertThat(runsOf(id)).isEqualTo(2); // two timestamps: two callbacks
  }

  @Test
  void aMissingOrMalformedSignatureIs400QuotingWhatIsWrong() throws Exception {
    String body = event("evt-" + UUID.randomUUID());
    assertProblem(callback("/payments/p-1/provider-callback", body), 400, "signature-missing");
    HttpResponse<String> malformed = signed(body, "t=soon,v1=abc");
    assertProblem(malformed, 400, "signature-malformed");
    assertThat(malformed.body()).contains("t must be unix seconds (1 to 12 digits), but was 'soon'");
  }

  @Test
  void anOversizeBodyIs413() throws Exception {
    String id = "evt-" + UUID.randomUUID();
    String body = "{\"id\":\"" + id + "\",\"pad\":\"" + "x".repeat(1100) + "\"}";
    assertProblem(signed(body, sign(CURRENT, now(), body)), 413, "body-too-large");
    // no Content-Length (chunked): read up to the limit, refused there
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    HttpResponse<String> chunked = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest
        .newBuilder(java.net.URI.create(base + "/payments/p-1/provider-callback"))
        .header("Content-Type", "application/json").header("Converge-Signature", sign(CURRENT, now(), body))
        .POST(java.net.http.HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(bytes)))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertProblem(chunked, 413, "body-too-large");
    assertThat(chunked.body()).contains("but more than 1024 bytes sent");
    assertThat(runsOf(id)).isZero();
  }

  @Test
  void aRetiredSecretNoLongerVerifies() throws Exception {
    String body = event("evt-" + UUID.randomUUID());
    String byPrevious = sign(PREVIOUS, now(), body);
    List<String> before = secrets.get();
    secrets.set(List.of(CURRENT));
    try {
      assertProblem(signed(body, byPrevious), 401, "signature-mismatch");
    } finally {
      secrets.set(before);
    }
    assertThat(signed(body, byPrevious).statusCode()).isEqualTo(200);
  }

  @Test
  void aClientCannotChooseTheKeyAndACopyToAnotherPathIs422() throws Exception {
    String a = event("evt-" + UUID.randomUUID());
    String b = event("evt-" + UUID.randomUUID());
    String header = sign(CURRENT, now(), a);
    HttpResponse<String> first = callback("/payments/p-1/provider-callback", a, "Converge-Signature", header,
        "Converge-Callback-Key", "mine");
    HttpResponse<String> second = callback("/payments/p-1/provider-callback", b, "Converge-Signature",
        sign(CURRENT, now(), b), "Converge-Callback-Key", "mine");
    assertThat(first.body()).contains("\"run\":1").doesNotContain("\"key\":\"mine\"");
    assertThat(second.body()).contains("\"run\":1").doesNotContain("\"key\":\"mine\"");
    // the signature does not cover the path: a copy aimed at another payment is refused by the store
    assertThat(callback("/payments/p-2/provider-callback", a, "Converge-Signature", header).statusCode())
        .isEqualTo(422);
  }

  private static int count(CallbackProblem problem) {
    AtomicInteger n = refusals.get(problem);
    return n == null ? 0 : n.get();
  }

  private static void assertProblem(HttpResponse<String> r, int status, String code) {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(
        ct -> assertThat(ct).startsWith("application/problem+json"));
    assertThat(r.body()).contains("\"type\":\"urn:converge:callback:" + code + "\"");
  }
}
