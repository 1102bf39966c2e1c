package io.converge.consumer.http.internal;

import io.converge.core.internal.Text;
import io.converge.consumer.http.CallbackException;
import io.converge.consumer.http.CallbackProblem;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A callback's signature header, {@code t=<unix seconds>,v1=<64 hex>[,v1=…]}, parsed, and the HMAC-SHA256 of its
 * signed text {@code <t>.<body>}. Immutable; thread-safe.
 *
 * @param timestamp the {@code t} entry, unix seconds
 * @param text the {@code t} entry as sent (its digits are what is signed)
 * @param signatures the {@code v1} entries, decoded, in order
 */
public record CallbackSignature(long timestamp, String text, List<byte[]> signatures) {

  /** The longest header read; a longer one is malformed. */
  static final int MAX_HEADER_LENGTH = 2048;
  /** The most {@code v1} entries read (rotation needs two or three). */
  static final int MAX_SIGNATURES = 8;
  private static final int QUOTED = 80;

  /**
   * Parses {@code value}, the header named {@code header}: comma-separated {@code key=value} entries (spaces around
   * them allowed), exactly one {@code t} of 1 to 12 digits, 1 to {@value #MAX_SIGNATURES} {@code v1} of 64 hex digits;
   * entries of other schemes are ignored.
   *
   * @throws CallbackException {@link CallbackProblem#SIGNATURE_MALFORMED}, the detail quoting the faulty part
   */
  public static CallbackSignature parse(String header, String value) {
    if (value.length() > MAX_HEADER_LENGTH) {
      throw malformed(header + " must be at most " + MAX_HEADER_LENGTH + " characters, but had " + value.length());
    }
    String t = null;
    List<byte[]> v1 = new ArrayList<>();
    for (String raw : value.split(",", -1)) {
      String entry = raw.strip();
      int eq = entry.indexOf('=');
      if (eq <= 0) {
        throw malformed(header + " must be comma-separated key=value entries, but has " + quote(entry));
      }
      String key = entry.substring(0, eq);
      String v = entry.substring(eq + 1);
      if (key.equals("t")) {
        if (t != null) {
          throw malformed(header + " must have one t entry, but has several");
        }
        if (!v.matches("[0-9]{1,12}")) {
          throw malformed(header + " t must be unix seconds (1 to 12 digits), but was " + quote(v));
        }
        t = v;
      } else if (key.equals("v1")) {
        if (!v.matches("[0-9a-fA-F]{64}")) {
          throw malformed(header + " v1 must be 64 hex digits (HMAC-SHA256), but entry " + (v1.size() + 1) + " was "
              + quote(v));
        }
        if (v1.size() == MAX_SIGNATURES) {
          throw malformed(header + " must have at most " + MAX_SIGNATURES + " v1 entries, but has more");
        }
        v1.add(HexFormat.of().parseHex(v));
      }
    }
    if (t == null) {
      throw malformed(header + " must have a t=<unix seconds> entry, but has none: " + quote(value));
    }
    if (v1.isEmpty()) {
      throw malformed(header + " must have at least one v1=<hex HMAC-SHA256> entry, but has none: " + quote(value));
    }
    return new CallbackSignature(Long.parseLong(t), t, List.copyOf(v1));
  }

  /** Whether any {@code v1} entry is the HMAC of {@code body} under any of {@code secrets}; constant time per pair. */
  public boolean matchesAny(List<byte[]> secrets, byte[] body) {
    boolean match = false;
    for (byte[] secret : secrets) {
      byte[] expected = hmac(secret, text, body);
      for (byte[] sent : signatures) {
        match |= MessageDigest.isEqual(expected, sent);
      }
    }
    return match;
  }

  /** The SHA-256 (hex) of the signed text: the callback's identity, whatever secret or entry order signed it. */
  public String digest(byte[] body) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(signedPrefix(text));
      return HexFormat.of().formatHex(sha.digest(body));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  /** {@code t=<unixSeconds>,v1=<hex HMAC of "<unixSeconds>.<body>">}. */
  public static String header(byte[] secret, long unixSeconds, byte[] body) {
    String t = Long.toString(unixSeconds);
    return "t=" + t + ",v1=" + HexFormat.of().formatHex(hmac(secret, t, body));
  }

  static byte[] hmac(byte[] secret, String t, byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      mac.update(signedPrefix(t));
      return mac.doFinal(body);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("every Java platform has HmacSHA256", e);
    }
  }

  private static byte[] signedPrefix(String t) {
    return (t + ".").getBytes(StandardCharsets.US_ASCII);
  }

  /** {@code text} in quotes, cut to {@value #QUOTED} characters, control characters escaped. */
  private static String quote(String text) {
    return Text.quoted(text, QUOTED);
  }

  private static CallbackException malformed(String detail) {
    return new CallbackException(CallbackProblem.SIGNATURE_MALFORMED, detail);
  }
}
