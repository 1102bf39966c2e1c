package io.converge.core;

import io.converge.core.internal.Backoff;
import io.converge.core.internal.DatabaseErrors;
import io.converge.core.internal.Require;
import java.sql.Connection;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for the database at start-up: an action that fails because the database cannot be reached
 * (connection refused, login or pool timeout, a server that is starting or frozen) is tried again with
 * capped exponential backoff (0.5 s doubling up to 5 s) until {@code limit} has passed, logging each
 * wait; any other failure (a bad password, a bad statement) is thrown at once. Used by
 * {@link Migrations} and, in Spring, on every {@code DataSource} bean before anything uses it
 * ({@code converge.startup.database-wait}, default {@value #DEFAULT_SECONDS} s).
 *
 * <p>Immutable and thread-safe.
 */
public final class DatabaseWait {

  /** The default limit in seconds. */
  public static final long DEFAULT_SECONDS = 60;
  /** The default limit, {@value #DEFAULT_SECONDS} s. */
  public static final Duration DEFAULT_LIMIT = Duration.ofSeconds(DEFAULT_SECONDS);
  private static final Duration MAX_LIMIT = Duration.ofHours(1);
  /** 500 ms doubling up to 5 s, without jitter. */
  private static final Backoff BACKOFF = Backoff.withJitter(Duration.ofMillis(500), Duration.ofSeconds(5), 2.0, 0.0,
      null);
  private static final Logger LOG = LoggerFactory.getLogger(DatabaseWait.class);

  private static final Map<DataSource, DatabaseWait> ASSIGNED = Collections.synchronizedMap(new WeakHashMap<>());

  private final Duration limit;
  private final String setting;

  private DatabaseWait(Duration limit, String setting) {
    this.limit = limit;
    this.setting = setting;
  }

  /**
   * A wait of at most {@code limit}; zero tries once and fails at once.
   *
   * @param setting the name of the setting {@code limit} came from, quoted in errors (e.g.
   *     {@code converge.startup.database-wait})
   * @throws IllegalArgumentException quoting {@code limit} when it is null, negative or over 1 hour
   */
  public static DatabaseWait upTo(Duration limit, String setting) {
    Objects.requireNonNull(setting, "setting");
    Require.that(limit != null && !limit.isNegative() && limit.compareTo(MAX_LIMIT) <= 0, setting,
        "be between 0 and 1h", limit);
    return new DatabaseWait(limit, setting);
  }

  /**
   * Makes this the wait of {@link Migrations#apply(DataSource, String)} on {@code dataSource} (by
   * identity, held weakly), so that a module's migrations honour the application's setting; the
   * Spring auto-configuration does it for every {@code DataSource} bean.
   */
  public void assignTo(DataSource dataSource) {
    ASSIGNED.put(Objects.requireNonNull(dataSource, "dataSource"), this);
  }

  /** The wait assigned to {@code dataSource}, else {@link #DEFAULT_LIMIT}. */
  static DatabaseWait of(DataSource dataSource) {
    DatabaseWait w = ASSIGNED.get(dataSource);
    return w != null ? w : upTo(DEFAULT_LIMIT, "converge.startup.database-wait");
  }

  /** The limit. */
  public Duration limit() {
    return limit;
  }

  /** Something to try against the database. */
  @FunctionalInterface
  public interface Attempt<T> {

    /** One try; may throw anything, a connection failure anywhere in its causes is waited out. */
    T run() throws Exception;
  }

  /**
   * Waits until {@code dataSource} gives a valid connection.
   *
   * @param what what is waiting, for the log and the error (e.g. {@code "DataSource bean 'dataSource'"})
   * @throws DatabaseUnavailableException naming the limit and its setting when the database did not answer in time
   */
  public void await(DataSource dataSource, String what) {
    run(what, () -> {
      try (Connection c = dataSource.getConnection()) {
        if (!c.isValid(5)) {
          throw new SQLTransientConnectionException("the connection is not valid", "08006");
        }
        return null;
      }
    });
  }

  /**
   * Runs {@code attempt}, again after each connection failure, until it succeeds or the limit passes.
   *
   * @return what {@code attempt} returned
   * @throws DatabaseUnavailableException naming the limit and its setting when the database did not answer in time
   * @throws RuntimeException what {@code attempt} threw when it was not a connection failure (checked ones wrapped
   *     in a {@link DatabaseUnavailableException} only if they are SQL connection failures, else in a
   *     {@link io.converge.core.ConvergeException})
   */
  public <T> T run(String what, Attempt<T> attempt) {
    long start = System.nanoTime();
    long deadline = start + limit.toNanos();
    for (int n = 1;; n++) {
      try {
        T result = attempt.run();
        if (n > 1) {
          LOG.info("Converge: the database answered {} after {} attempts ({} ms)", what, n,
              (System.nanoTime() - start) / 1_000_000);
        }
        return result;
      } catch (Exception e) {
        Throwable cause = connectionFailure(e);
        if (cause == null) {
          if (e instanceof RuntimeException r) {
            throw r;
          }
          throw new io.converge.core.ConvergeException(what + " failed: " + e, e);
        }
        long remainingMs = (deadline - System.nanoTime()) / 1_000_000;
        if (remainingMs <= 0) {
          throw new DatabaseUnavailableException("The database did not answer " + what + " within " + setting + "="
              + limit.toSeconds() + "s (" + n + " attempts); last error: " + cause, null, e);
        }
        long sleep = Math.min(BACKOFF.ceiling(n).toMillis(), remainingMs);
        LOG.warn("Converge: waiting for the database for {}: {} (attempt {}, next in {} ms; giving up after {}={}s)",
            what,
            cause.toString(), n, sleep, setting, limit.toSeconds());
        try {
          Thread.sleep(sleep);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new DatabaseUnavailableException("Interrupted while waiting for the database for " + what, null, e);
        }
      }
    }
  }

  /**
   * The connection failure among {@code e}'s causes, or null: an outage as {@link DatabaseErrors} classifies it (a
   * lost or refused connection, a pool timeout, a server starting or shutting down, too many connections). A
   * statement timeout or any other answer of the database is not waited out: it is thrown at once.
   */
  static Throwable connectionFailure(Throwable e) {
    return DatabaseErrors.outageIn(e);
  }
}
