package io.converge.examples.order;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.springframework.http.HttpStatus;

/**
 * {@code Prefer: wait=N} on {@code POST /orders} (RFC 7240): how long the client is willing to wait for the order's
 * outcome, and the status that tells it. Stateless.
 *
 * <p>Parsing: the preferences of every {@code Prefer} header, comma-separated, names case-insensitive; {@code wait}'s
 * value is delta-seconds (digits, optionally quoted), capped at {@link #MAX}. A malformed or negative value, or no
 * {@code wait}, is ignored as RFC 7240 asks of preferences a server cannot honour (never a 400): the request is
 * answered as without the header. {@code wait=0} asks for no wait.
 */
final class PreferWait {

  /** The longest wait honoured: a longer one is cut to it. */
  static final Duration MAX = Duration.ofSeconds(10);

  private PreferWait() {
  }

  /** The wait the {@code Prefer} header values ask for, capped at {@link #MAX}; empty when none or malformed. */
  static Optional<Duration> parse(List<String> prefer) {
    if (prefer == null) {
      return Optional.empty();
    }
    for (String header : prefer) {
      for (String preference : header.split(",")) {
        String[] nameValue = preference.split(";", 2)[0].split("=", 2);
        if (!nameValue[0].trim().toLowerCase(Locale.ROOT).equals("wait") || nameValue.length < 2) {
          continue;
        }
        String v = nameValue[1].trim();
        if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
          v = v.substring(1, v.length() - 1);
        }
        if (v.isEmpty() || v.length() > 9 || !v.chars().allMatch(ch -> ch >= '0' && ch <= '9')) {
          return Optional.empty(); // malformed: ignored, as if absent
        }
        Duration d = Duration.ofSeconds(Long.parseLong(v));
        return Optional.of(d.compareTo(MAX) > 0 ? MAX : d); // the first wait preference counts
      }
    }
    return Optional.empty();
  }

  /**
   * The answer to a client that waited, for an order in {@code state} (with {@code cancelReason}): 201 paid, 402 its
   * payment refused, 409 canceled for stock (or any other cancellation), 202 not finished (the client follows the
   * {@code Location}).
   */
  static HttpStatus status(OrderState state, String cancelReason) {
    return switch (state) {
      case PAID -> HttpStatus.CREATED;
      case CREATED -> HttpStatus.ACCEPTED;
      case CANCELED -> cancelReason != null && cancelReason.startsWith("payment:") ? HttpStatus.PAYMENT_REQUIRED
          : HttpStatus.CONFLICT;
    };
  }
}
