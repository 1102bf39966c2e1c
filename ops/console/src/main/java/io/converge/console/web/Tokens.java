package io.converge.console.web;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The confirmation tokens of the console's actions: one per confirmation page, bound to its action and target,
 * valid once and for {@link #TTL}. A POST without a token it was given cannot act (no cross-site request, no
 * double submit). Thread-safe; at most {@link #MAX} outstanding tokens (the oldest are dropped).
 */
final class Tokens {

  static final Duration TTL = Duration.ofMinutes(15);
  static final int MAX = 10_000;

  private record Issued(String purpose, Instant expires) {
  }

  private final SecureRandom random = new SecureRandom();
  private final Map<String, Issued> issued = new ConcurrentHashMap<>();
  private final Clock clock;

  Tokens(Clock clock) {
    this.clock = clock;
  }

  /** A new token for {@code purpose} (action and target). */
  String issue(String purpose) {
    if (issued.size() >= MAX) {
      expire();
    }
    byte[] bytes = new byte[24];
    random.nextBytes(bytes);
    String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    issued.put(token, new Issued(purpose, clock.instant().plus(TTL)));
    return token;
  }

  /** Whether {@code token} was issued for {@code purpose} and is still valid; it is spent either way. */
  boolean redeem(String token, String purpose) {
    if (token == null) {
      return false;
    }
    Issued i = issued.remove(token);
    return i != null && i.purpose().equals(purpose) && clock.instant().isBefore(i.expires());
  }

  private void expire() {
    Instant now = clock.instant();
    issued.values().removeIf(i -> !now.isBefore(i.expires()));
    Iterator<String> it = issued.keySet().iterator();
    while (issued.size() >= MAX && it.hasNext()) {
      it.next();
      it.remove();
    }
  }
}
