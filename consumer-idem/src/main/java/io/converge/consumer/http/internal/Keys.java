package io.converge.consumer.http.internal;

import io.converge.consumer.http.IdempotencyException;
import io.converge.consumer.http.IdempotencyProblem;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Collections;
import java.util.List;

/** Validation of the key and tenant a request carries. */
final class Keys {

  static final int MAX_KEY_LENGTH = 255;
  static final int MAX_TENANT_LENGTH = 64;

  private Keys() {
  }

  /**
   * The key of {@code request}, or null when it has none. A structured-field string ({@code "abc"}, as
   * the IETF draft writes it) is unquoted, so {@code "abc"} and {@code abc} are one key.
   *
   * @throws IdempotencyException {@link IdempotencyProblem#KEY_INVALID} for an empty, too long,
   *     non-printable-ASCII or repeated key
   */
  static String key(HttpServletRequest request, String header) {
    List<String> values = Collections.list(request.getHeaders(header));
    if (values.isEmpty()) {
      return null;
    }
    if (values.size() > 1) {
      throw invalid(header + " must be sent once, but was sent " + values.size() + " times");
    }
    String key = values.get(0);
    if (key.length() >= 2 && key.startsWith("\"") && key.endsWith("\"")) {
      key = key.substring(1, key.length() - 1);
    }
    if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
      throw invalid(header + " must have 1 to " + MAX_KEY_LENGTH + " characters, but had " + key.length());
    }
    for (int i = 0; i < key.length(); i++) {
      char ch = key.charAt(i);
      if (ch < 0x20 || ch > 0x7e) {
        throw invalid(header + " must be printable ASCII, but has character U+" + String.format("%04X", (int) ch)
            + " at index " + i);
      }
    }
    return key;
  }

  static void requirePresent(String key, String header) {
    if (key == null) {
      throw new IdempotencyException(IdempotencyProblem.KEY_MISSING, "This endpoint requires an " + header + " header");
    }
  }

  /** The tenant, validated. @throws IdempotencyException {@link IdempotencyProblem#TENANT_INVALID} */
  static String tenant(String tenant) {
    if (tenant == null || tenant.isEmpty() || tenant.length() > MAX_TENANT_LENGTH
        || tenant.chars().anyMatch(Character::isISOControl)) {
      throw new IdempotencyException(IdempotencyProblem.TENANT_INVALID, "The request's tenant must have 1 to "
          + MAX_TENANT_LENGTH + " characters and no control character, but was "
          + (tenant == null ? "absent" : tenant.length() + " characters long"));
    }
    return tenant;
  }

  private static IdempotencyException invalid(String detail) {
    return new IdempotencyException(IdempotencyProblem.KEY_INVALID, detail);
  }
}
