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
 * The confirmation tokens of the console's actions: one per confirmation page, bound to its action, target and
 * operator, valid once and for {@link #TTL}. A POST without a token it was given cannot act (no cross-site
 * request, no double submit, no token of another operator). Thread-safe; at most {@link #MAX} outstanding
 * tokens (the oldest are dropped).
 */
final class Tokens {

  static final Duration TTL = Duration.ofMinutes(15);
  static final int MAX = 10_000;

  /** What a redeemed token was. */
  enum Redemption {
    /** Issued for this purpose and operator, not expired. */
    VALID,
    /** Issued for this purpose to another operator. */
    OTHER_OPERATOR,
    /** Unknown, already used, expired, or issued for another action or target. */
    INVALID
  }

  private record Issued(String purpose, String operator, Instant expires) {
  }

  private final SecureRandom random = new SecureRandom();
  private final Map<String, Issued> issued = new ConcurrentHashMap<>();
  private final Clock clock;

  Tokens(Clock clock) {
    this.clock = clock;
  }

  /** A new token for {@code purpose} (action and target), to be redeemed by {@code operator} only. */
  String issue(String purpose, String operator) {
    if (issued.size() >= MAX) {
      expire();
    }
    byte[] bytes = new byte[24];
    random.nextBytes(bytes);
    String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    issued.put(token, new Issued(purpose, operator, clock.instant().plus(TTL)));
    return token;
  }

  /**
   * Whether {@code token} was issued for {@code purpose} to {@code operator} and is still valid; it is spent
   * whatever the answer (a token shown to another operator is not left for its owner to use).
   */
  Redemption redeem(String token, String purpose, String operator) {
    if (token == null) {
      return Redemption.INVALID;
    }
    Issued i = issued.remove(token);
    if (i == null || !i.purpose().equals(purpose) || !clock.instant().isBefore(i.expires())) {
      return Redemption.INVALID;
    }
    return i.operator().equals(operator) ? Redemption.VALID : Redemption.OTHER_OPERATOR;
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
