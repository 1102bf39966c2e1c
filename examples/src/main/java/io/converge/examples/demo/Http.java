package io.converge.examples.demo;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/** A small JSON-over-HTTP client for the demo's traffic. Thread-safe. */
final class Http {

  /** A response: status, the JSON body as a map, and whether the server marked it a replay. */
  record Reply(int status, Map<String, Object> body, boolean replayed) {
    String field(String name) {
      Object v = body.get(name);
      return v == null ? null : v.toString();
    }
  }

  private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};

  private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final JsonMapper json = JsonMapper.builder().build();
  private final String base;

  Http(int port) {
    this.base = "http://127.0.0.1:" + port;
  }

  /** POSTs {@code body} as JSON, with an {@code Idempotency-Key} when {@code key} is not null. */
  Reply post(String path, Map<String, ?> body, String key) throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(json.writeValueAsBytes(body)));
    if (key != null) {
      b.header("Idempotency-Key", key).header("X-Tenant-Id", TENANT);
    }
    return reply(client.send(b.build(), HttpResponse.BodyHandlers.ofByteArray()));
  }

  /** GETs {@code path}. */
  Reply get(String path) throws IOException, InterruptedException {
    return reply(client.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30)).GET().build(),
        HttpResponse.BodyHandlers.ofByteArray()));
  }

  private Reply reply(HttpResponse<byte[]> r) {
    Map<String, Object> body = r.body().length == 0 ? Map.of() : json.readValue(r.body(), MAP);
    boolean replayed = r.headers().firstValue(REPLAY_HEADER).map("true"::equalsIgnoreCase).orElse(false);
    return new Reply(r.statusCode(), body, replayed);
  }

  /** The tenant the demo's clients send ({@code X-Tenant-Id}). */
  static final String TENANT = "shop-1";

  /** The header Converge's Idempotency-Key filter sets on a replayed response. */
  static final String REPLAY_HEADER = "Idempotent-Replayed";
}
