package io.converge.pulsar.internal;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import io.converge.core.internal.Backoff;
import io.converge.core.internal.Require;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for Pulsar at start-up, as {@code io.converge.core.DatabaseWait} waits for the database: an attempt that
 * fails because the broker is unavailable ({@link PulsarErrors#isStartupOutage}: connection refused or timed out,
 * lookup timeout, transaction coordinator not ready) is tried again with capped exponential backoff (0.5 s doubling
 * up to 5 s) until the limit has passed, each wait logged at WARN; any other failure (a bad URL, an authorization
 * error, a refused subscription) is thrown at once. The attempt closes what it opened when it fails. Immutable and
 * thread-safe.
 */
public final class BrokerWait {

  /** The default limit, 60 s, as the database's. */
  public static final Duration DEFAULT_LIMIT = Duration.ofSeconds(60);
  /** The builders' name of the setting. */
  public static final String SETTING = "pulsar.startupWait";
  /** The Spring property of the setting. */
  public static final String PROPERTY = "converge.startup.broker-wait";
  private static final Duration MAX_LIMIT = Duration.ofHours(1);
  /** 500 ms doubling up to 5 s, without jitter (the database wait's). */
  private static final Backoff BACKOFF = Backoff.withJitter(Duration.ofMillis(500), Duration.ofSeconds(5), 2.0, 0.0,
      null);
  private static final Logger LOG = LoggerFactory.getLogger(BrokerWait.class);

  private final Duration limit;

  private BrokerWait(Duration limit) {
    this.limit = limit;
  }

  /**
   * A wait of at most {@code limit}; zero tries once and fails at once.
   *
   * @throws IllegalArgumentException quoting {@code limit} when it is null, negative or over 1 hour
   */
  public static BrokerWait upTo(Duration limit) {
    return new BrokerWait(check(SETTING, limit));
  }

  /**
   * Returns {@code limit} when it is between 0 and 1 h, else fails naming {@code name} and quoting the value.
   */
  public static Duration check(String name, Duration limit) {
    Require.that(limit != null && !limit.isNegative() && limit.compareTo(MAX_LIMIT) <= 0, name,
        "be between 0 and 1h", limit);
    return limit;
  }

  /** The limit. */
  public Duration limit() {
    return limit;
  }

  /** One try at starting something against Pulsar; it closes what it opened before it throws. */
  @FunctionalInterface
  public interface Attempt<T> {

    /** One try. */
    T run() throws Exception;
  }

  /**
   * Runs {@code attempt}, again after each failure that says Pulsar is unavailable, until it succeeds or the limit
   * passes.
   *
   * @param what what is starting, for the log and the error (e.g. {@code "the producer of group g"})
   * @param serviceUrl the broker's URL, for the log and the error
   * @return what {@code attempt} returned
   * @throws BrokerUnavailableException naming the limit and its setting when Pulsar stayed unavailable
   * @throws RuntimeException any other failure of {@code attempt}, at once (a checked one wrapped in a
   *     {@link ConvergeException})
   */
  public <T> T run(String what, String serviceUrl, Attempt<T> attempt) {
    long start = System.nanoTime();
    long deadline = start + limit.toNanos();
    for (int n = 1;; n++) {
      try {
        T result = attempt.run();
        if (n > 1) {
          LOG.info("Converge: Pulsar at {} answered {} after {} attempts ({} ms)", serviceUrl, what, n,
              (System.nanoTime() - start) / 1_000_000);
        }
        return result;
      } catch (Exception e) {
        if (!PulsarErrors.isStartupOutage(e)) {
          if (e instanceof RuntimeException r) {
            throw r;
          }
          throw new ConvergeException("Starting " + what + " against Pulsar at " + serviceUrl + " failed: " + e, e);
        }
        long remainingMs = (deadline - System.nanoTime()) / 1_000_000;
        if (remainingMs <= 0) {
          throw new BrokerUnavailableException("Pulsar at " + serviceUrl + " did not answer " + what + " within "
              + SETTING + "=" + limit.toSeconds() + "s (Spring: " + PROPERTY + "; " + n + " attempts); last error: "
              + e, null, e);
        }
        long sleep = Math.min(BACKOFF.ceiling(n).toMillis(), remainingMs);
        LOG.warn("Converge: waiting for Pulsar at {} for {}: {} (attempt {}, next in {} ms; giving up after {}={}s)",
            serviceUrl, what, e.toString(), n, sleep, SETTING, limit.toSeconds());
        try {
          Thread.sleep(sleep);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new BrokerUnavailableException("Interrupted while waiting for Pulsar at " + serviceUrl + " for "
              + what, null, e);
        }
      }
    }
  }
}
