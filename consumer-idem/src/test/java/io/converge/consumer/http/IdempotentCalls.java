package io.converge.consumer.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The client side of the Idempotency-Key ITs: one POST, and what a replayed answer shows. */
final class IdempotentCalls {

  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private IdempotentCalls() {
  }

  /**
   * POSTs {@code body} to {@code url} (30 s timeout) with its content type and {@code headers} as name, value
   * pairs; a header whose value is null is not sent.
   */
  static HttpResponse<String> post(String url, String contentType, String body, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
        .header("Content-Type", contentType).POST(HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i < headers.length; i += 2) {
      if (headers[i + 1] != null) {
        b.header(headers[i], headers[i + 1]);
      }
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Asserts that {@code replay} answered {@code status} with {@code first}'s body, marked as replayed. */
  static void assertReplayed(HttpResponse<String> replay, HttpResponse<String> first, int status) {
    assertThat(replay.statusCode()).as(replay.body()).isEqualTo(status);
    assertThat(replay.body()).isEqualTo(first.body());
    assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
  }
}
