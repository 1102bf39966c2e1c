package io.converge.consumer.http.internal;

import io.converge.consumer.http.IdempotencyProblem;
import java.nio.charset.StandardCharsets;

/** RFC 9457 problem bodies ({@code application/problem+json}). */
final class Problems {

  static final String CONTENT_TYPE = "application/problem+json";

  private Problems() {
  }

  static byte[] body(IdempotencyProblem problem, String detail) {
    return body(problem.type(), problem.title(), problem.status(), detail);
  }

  static byte[] body(String type, String title, int status, String detail) {
    StringBuilder b = new StringBuilder("{\"type\":");
    JsonCanonicalizer.quote(b, type);
    b.append(",\"title\":");
    JsonCanonicalizer.quote(b, title);
    b.append(",\"status\":").append(status);
    if (detail != null) {
      b.append(",\"detail\":");
      JsonCanonicalizer.quote(b, detail);
    }
    return b.append('}').toString().getBytes(StandardCharsets.UTF_8);
  }
}
