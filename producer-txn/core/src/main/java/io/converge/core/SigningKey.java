package io.converge.core;

import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * One HMAC-SHA256 key of {@link SigningKeys}: an id, which travels in the {@link Envelope#SIGNATURE} header, and a
 * secret of at least 32 bytes, which never leaves the process ({@link #toString()} names the id only). Immutable and
 * thread-safe.
 */
public final class SigningKey {

  /** The key id's syntax: 1..64 ASCII letters, digits, {@code . _ -} (no {@code :}, the header's separator). */
  public static final Pattern ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");

  /** The shortest secret accepted, in bytes: HMAC-SHA256's output length (RFC 2104 section 3). */
  public static final int MIN_SECRET_BYTES = 32;

  private final String id;
  private final SecretKeySpec secret;

  private SigningKey(String id, byte[] secret) {
    this.id = id;
    this.secret = new SecretKeySpec(secret, "HmacSHA256");
  }

  /**
   * A key.
   *
   * @param id its id; see {@link #ID}
   * @param secret its secret, at least {@value #MIN_SECRET_BYTES} bytes; copied
   * @throws IllegalArgumentException naming the bad id (quoted) or the secret's length
   */
  public static SigningKey of(String id, byte[] secret) {
    if (id == null || !ID.matcher(id).matches()) {
      throw new IllegalArgumentException("signing.key.id must match " + ID.pattern() + ", but was "
          + (id == null ? "null" : "'" + id + "'"));
    }
    if (secret == null || secret.length < MIN_SECRET_BYTES) {
      throw new IllegalArgumentException("signing.key '" + id + "' secret must be at least " + MIN_SECRET_BYTES
          + " bytes, but was " + (secret == null ? "null" : secret.length + " bytes"));
    }
    return new SigningKey(id, Arrays.copyOf(secret, secret.length));
  }

  /** The key id. */
  public String id() {
    return id;
  }

  /** The HMAC-SHA256 of {@code data} under this key. */
  byte[] mac(byte[] data) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(secret);
      return mac.doFinal(data);
    } catch (GeneralSecurityException e) {
      throw new ConvergeException("HmacSHA256 is not available in this JVM", e);
    }
  }

  @Override
  public String toString() {
    return "SigningKey[" + id + "]";
  }
}
