package io.converge.core.spring;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import io.converge.core.SigningKey;
import io.converge.core.SigningKeys;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code converge.signing.*}: the keys messages are signed and verified with (one {@link SigningKeys} bean for the
 * producer's {@code converge.producer.sign} and the consumers' {@code converge.consumer.require-signature}).
 * Immutable; validated when the context starts. The secrets are never printed ({@link #toString}).
 *
 * @param currentKeyId the id of the key new messages are signed with (the current key); one of {@code secrets}' ids
 * @param secrets the active keys by id, each secret's UTF-8 bytes at least 32 long: all of them verify, so a rotation
 *     adds the new key here everywhere first, then makes it {@code current-key-id}, then drops the old one
 */
@ConfigurationProperties("converge.signing")
public record SigningProperties(String currentKeyId, Map<String, String> secrets) {

  /** The keys, or null when {@code current-key-id} is not set (then nothing is signed or verified by configuration). */
  SigningKeys signingKeys() {
    if (currentKeyId == null && (secrets == null || secrets.isEmpty())) {
      return null;
    }
    if (currentKeyId == null) {
      throw new IllegalArgumentException(
          "converge.signing.current-key-id must be set when converge.signing.secrets are, "
              + "but was not (secrets for " + secrets.keySet() + ")");
    }
    Map<String, byte[]> bytes = new LinkedHashMap<>();
    if (secrets != null) {
      secrets.forEach((id, secret) -> {
        byte[] b = secret == null ? new byte[0] : secret.getBytes(StandardCharsets.UTF_8);
        try {
          SigningKey.of(id, b);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("converge.signing.secrets." + id + ": " + e.getMessage(), e);
        }
        bytes.put(id, b);
      });
    }
    if (!bytes.containsKey(currentKeyId)) {
      throw new IllegalArgumentException("converge.signing.current-key-id must be one of the ids of "
          + "converge.signing.secrets " + bytes.keySet() + ", but was '" + currentKeyId + "'");
    }
    return SigningKeys.of(currentKeyId, bytes);
  }

  /** The settings without the secrets (a record's own {@code toString} would print them). */
  @Override
  public String toString() {
    return "SigningProperties[currentKeyId=" + currentKeyId + ", secrets=" + (secrets == null ? "[]" : secrets.keySet())
        + " (hidden)]";
  }
}
