package io.converge.consumer.http.internal;

import io.converge.core.internal.Json;
import io.converge.consumer.http.HttpProblem;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** RFC 9457 problem bodies ({@code application/problem+json}). */
final class Problems {

  static final String CONTENT_TYPE = "application/problem+json";

  private Problems() {
  }

  /** Answers {@code problem} with {@code detail} (null: none) on {@code response}. */
  static void write(HttpServletResponse response, HttpProblem problem, String detail) throws IOException {
    write(response, problem.status(), body(problem, detail));
  }

  /** Answers {@code status} with the problem {@code body}. */
  static void write(HttpServletResponse response, int status, byte[] body) throws IOException {
    response.setStatus(status);
    response.setContentType(CONTENT_TYPE);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  /** {@code problem}, without detail, as a key's stored answer. */
  static StoredResponse stored(HttpProblem problem) {
    return new StoredResponse(problem.status(), java.util.Map.of("Content-Type", CONTENT_TYPE), body(problem, null));
  }

  static byte[] body(HttpProblem problem, String detail) {
    return body(problem.type(), problem.title(), problem.status(), detail);
  }

  static byte[] body(String type, String title, int status, String detail) {
    StringBuilder b = new StringBuilder("{\"type\":");
    Json.quote(b, type);
    b.append(",\"title\":");
    Json.quote(b, title);
    b.append(",\"status\":").append(status);
    if (detail != null) {
      b.append(",\"detail\":");
      Json.quote(b, detail);
    }
    return b.append('}').toString().getBytes(StandardCharsets.UTF_8);
  }
}
