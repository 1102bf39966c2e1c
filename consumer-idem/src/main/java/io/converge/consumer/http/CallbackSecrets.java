package io.converge.consumer.http;

import io.converge.core.internal.Require;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Where the signed-callback filter gets the secrets a callback may be signed with. Asked once per callback, so a
 * provider that reads a vault or a rotated file serves a new secret at once. Rotation: return the new secret and the
 * old one while the payment provider rolls over (it then signs with both, one {@code v1} entry each, or with either);
 * a callback verifies when any of its {@code v1} entries matches any returned secret. Implementations are thread-safe;
 * a failure or an empty list refuses the callback with 503 {@link CallbackProblem#SECRETS_UNAVAILABLE}.
 */
@FunctionalInterface
public interface CallbackSecrets {

  /** The active secrets (the bytes the HMAC is keyed with), current first; at least one. */
  List<byte[]> secrets();

  /**
   * Fixed secrets, each used as its UTF-8 bytes (the whole text, e.g. {@code whsec_…}, as the payment provider shows
   * it). At least one, none blank.
   */
  static CallbackSecrets of(String... secrets) {
    Require.that(secrets != null && secrets.length > 0, "converge.callback.secrets", "name at least one secret",
        "none");
    List<byte[]> bytes = Arrays.stream(secrets).map(s -> {
      Require.that(s != null && !s.isBlank(), "converge.callback.secrets", "not be blank",
          s == null ? "null" : "a blank secret");
      return s.getBytes(StandardCharsets.UTF_8);
    }).toList();
    return () -> bytes.stream().map(byte[]::clone).toList();
  }
}
