package io.converge.core;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Where message signatures ({@link MessageSignature}) get their keys: producers sign with {@link #current()},
 * consumers verify with any {@link #active} key, so that keys can rotate without a message in flight failing. Rotate
 * in three steps: give every consumer the new key (active, not current); make it current on the producers; once no
 * message signed with the old key can still arrive (the consumers' replay window), drop the old key everywhere.
 * {@link #of} is a fixed set; implement this interface to read keys from a secret store that changes at run time.
 *
 * <p>Implementations are thread-safe and fast (called for every message) and never return a key whose id does not
 * match {@link SigningKey#ID}: {@link SigningKey#of} guarantees it.
 */
public interface SigningKeys {

  /** The key new messages are signed with; never null. */
  SigningKey current();

  /** The active key with {@code keyId}, which verifies messages; null when it is unknown or retired. */
  SigningKey active(String keyId);

  /**
   * A fixed set of keys: all of them verify, {@code currentKeyId}'s signs.
   *
   * @param currentKeyId the id of the key to sign with; one of {@code secrets}' ids
   * @param secrets the secrets by key id (each id matching {@link SigningKey#ID}, each secret at least
   *     {@value SigningKey#MIN_SECRET_BYTES} bytes); copied
   * @throws IllegalArgumentException naming a bad key id (quoted) or secret, or a current key id not among them
   */
  static SigningKeys of(String currentKeyId, Map<String, byte[]> secrets) {
    Objects.requireNonNull(secrets, "secrets");
    Map<String, SigningKey> keys = new LinkedHashMap<>();
    secrets.forEach((id, secret) -> keys.put(id, SigningKey.of(id, secret)));
    SigningKey current = keys.get(currentKeyId);
    if (current == null) {
      throw new IllegalArgumentException("signing.currentKeyId must be one of " + keys.keySet() + ", but was "
          + (currentKeyId == null ? "null" : "'" + currentKeyId + "'"));
    }
    Map<String, SigningKey> fixed = Map.copyOf(keys);
    return new SigningKeys() {

      @Override
      public SigningKey current() {
        return current;
      }

      @Override
      public SigningKey active(String keyId) {
        return keyId == null ? null : fixed.get(keyId);
      }

      @Override
      public String toString() {
        return "SigningKeys[current=" + current.id() + ", active=" + fixed.keySet() + "]";
      }
    };
  }
}
