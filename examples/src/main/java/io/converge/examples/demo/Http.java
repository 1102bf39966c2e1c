package io.converge.examples.demo;

import io.converge.consumer.http.IdempotencyProblem;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * A small JSON-over-HTTP client for the demo's traffic that retries as a real client does: the same
 * request again (same {@code Idempotency-Key}, same body) after a timeout, a connection error, a 503,
 * a 502/504, a 409 "in progress" of a keyed request, or a 500 of an unkeyed one (the payment API is
 * idempotent by its business numbers); capped exponential backoff with jitter, honouring
 * {@code Retry-After}, until a deadline per request. A keyed 500 is never retried: the Idempotency-Key
 * filter stored it, it is the request's verdict; nor is any other 409, in particular the filter's
 * {@code answer-lost}, which it answers for good to every retry of a key whose answer a crash took (the caller
 * looks the outcome up instead: {@code GET /orders?idempotency-key=}). A 503 {@code outcome-unknown} (a commit
 * whose outcome is unknown) is retried after its {@code Retry-After} (the key's lease) like any 503.
 * Thread-safe.
 */
final class Http {

  /**
   * A response: status, the JSON body as a map, whether the server marked it a replay, and how it came
   * over the wire (version, body length, framing headers, attempt), which an anomaly report quotes.
   */
  record Reply(int status, Map<String, Object> body, boolean replayed, String wire) {

    /** The status of a request that got no answer before its deadline. */
    static final int NO_ANSWER = 0;

    String field(String name) {
      Object v = body.get(name);
      return v == null ? null : v.toString();
    }
  }

  /** How many requests were retried, and how many got no final answer within their deadline. */
  record Counts(int retries, int gaveUp) {
  }

  /** The tenant the demo's clients send ({@code X-Tenant-Id}). */
  static final String TENANT = "shop-1";

  /** The header Converge's Idempotency-Key filter sets on a replayed response. */
  static final String REPLAY_HEADER = "Idempotent-Replayed";

  /** Default deadline of one request, retries included. */
  static final Duration DEADLINE = Duration.ofMinutes(3);

  private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {
  };
  private static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(30);
  private static final long FIRST_BACKOFF_MS = 200;
  private static final long MAX_BACKOFF_MS = 5_000;

  private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final JsonMapper json = JsonMapper.builder().build();
  private final String base;
  private final Duration deadline;
  private final AtomicInteger retries;
  private final AtomicInteger gaveUp;

  /** A client of {@code 127.0.0.1:port} with its own counts. */
  Http(int port) {
    this(port, DEADLINE, new AtomicInteger(), new AtomicInteger());
  }

  private Http(int port, Duration deadline, AtomicInteger retries, AtomicInteger gaveUp) {
    this.base = "http://127.0.0.1:" + port;
    this.deadline = deadline;
    this.retries = retries;
    this.gaveUp = gaveUp;
  }

  /** A client of another port that adds to the same counts. */
  Http port(int port) {
    return new Http(port, deadline, retries, gaveUp);
  }

  /** The retries and give-ups so far. */
  Counts counts() {
    return new Counts(retries.get(), gaveUp.get());
  }

  /** POSTs {@code body} as JSON, with an {@code Idempotency-Key} when {@code key} is not null; retries. */
  Reply post(String path, Map<String, ?> body, String key) throws InterruptedException {
    return send(postRequest(path, body, key), key != null);
  }

  /**
   * POSTs once more only after a timeout, a connection error or a 503: a 409 "in progress" is
   * returned to the caller (the demo's concurrent bursts count them).
   */
  Reply postNo409Retry(String path, Map<String, ?> body, String key) throws InterruptedException {
    return send(postRequest(path, body, key), false);
  }

  /**
   * As {@link #post}, with {@code Prefer: wait=<seconds>}: the order service may answer with the order's outcome
   * (201, 402, 409) or 202 when it has not ended within the wait.
   */
  Reply postPreferWait(String path, Map<String, ?> body, String key, int seconds) throws InterruptedException {
    HttpRequest r = postRequest(path, body, key);
    return send(HttpRequest.newBuilder(r, (name, value) -> true).header("Prefer", "wait=" + seconds).build(),
        key != null);
  }

  /**
   * POSTs {@code body} exactly as given (JSON) with header {@code name: value} (a signed callback); retries like an
   * unkeyed request.
   */
  Reply postSigned(String path, byte[] body, String name, String value) throws InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(base + path)).timeout(ATTEMPT_TIMEOUT)
        .header("Content-Type", "application/json").header(name, value)
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), false);
  }

  /** GETs {@code path}; retries. */
  Reply get(String path) throws InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(base + path)).timeout(ATTEMPT_TIMEOUT).GET().build(), false);
  }

  /** GETs {@code path} as the demo's tenant ({@code X-Tenant-Id}); retries. */
  Reply getAsTenant(String path) throws InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(base + path)).timeout(ATTEMPT_TIMEOUT).header("X-Tenant-Id", TENANT)
        .GET().build(), false);
  }

  private HttpRequest postRequest(String path, Map<String, ?> body, String key) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(ATTEMPT_TIMEOUT)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(json.writeValueAsBytes(body)));
    if (key != null) {
      b.header("Idempotency-Key", key).header("X-Tenant-Id", TENANT);
    }
    return b.build();
  }

  private Reply send(HttpRequest request, boolean retry409) throws InterruptedException {
    boolean keyed = request.headers().firstValue("Idempotency-Key").isPresent();
    long end = System.nanoTime() + deadline.toNanos();
    long backoff = FIRST_BACKOFF_MS;
    for (int attempt = 1;; attempt++) {
      Reply reply = null;
      String failure;
      long retryAfterMs = 0;
      try {
        HttpResponse<byte[]> r = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
        reply = reply(r, attempt);
        if (!retryable(r.statusCode(), reply.field("type"), keyed, retry409)) {
          return reply;
        }
        failure = "HTTP " + r.statusCode();
        retryAfterMs = r.headers().firstValue("Retry-After").map(Http::seconds).orElse(0L) * 1000;
      } catch (HttpTimeoutException | ConnectException e) {
        failure = e.toString();
      } catch (IOException e) { // connection reset or closed by the server
        failure = e.toString();
      }
      long sleep = Math.min(MAX_BACKOFF_MS,
          Math.max(retryAfterMs, backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1)));
      if (System.nanoTime() + sleep * 1_000_000 > end) {
        gaveUp.incrementAndGet();
        return reply != null ? reply
            : new Reply(Reply.NO_ANSWER, Map.of("error", "no answer within " + deadline
                + " after " + attempt + " attempts; last: " + failure), false, "no answer");
      }
      retries.incrementAndGet();
      Thread.sleep(sleep);
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
    }
  }

  /**
   * 503/502/504 always; a 409 when asked and only the Idempotency-Key filter's {@code in-progress} (its problem
   * {@code type}), never {@code answer-lost} (final) nor another 409; 500 only without a key (no stored verdict).
   */
  static boolean retryable(int status, String problemType, boolean keyed, boolean retry409) {
    return status == 502 || status == 503 || status == 504
        || (status == 409 && retry409 && IdempotencyProblem.IN_PROGRESS.type().equals(problemType))
        || (status == 500 && !keyed);
  }

  private static long seconds(String retryAfter) {
    try {
      return Math.max(0, Math.min(30, Long.parseLong(retryAfter.trim())));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private Reply reply(HttpResponse<byte[]> r, int attempt) {
    Map<String, Object> body;
    try {
      body = r.body().length == 0 ? Map.of() : json.readValue(r.body(), MAP);
    } catch (RuntimeException e) { // an error page of the server, not the API's JSON
      body = Map.of("error", "not JSON: " + new String(r.body(), java.nio.charset.StandardCharsets.UTF_8));
    }
    boolean replayed = r.headers().firstValue(REPLAY_HEADER).map("true"::equalsIgnoreCase).orElse(false);
    String wire = r.version() + ", " + r.body().length + " bytes, content-length "
        + r.headers().firstValue("Content-Length").orElse("-") + ", transfer-encoding "
        + r.headers().firstValue("Transfer-Encoding").orElse("-") + ", connection "
        + r.headers().firstValue("Connection").orElse("-") + ", attempt " + attempt;
    return new Reply(r.statusCode(), body, replayed, wire);
  }
}
