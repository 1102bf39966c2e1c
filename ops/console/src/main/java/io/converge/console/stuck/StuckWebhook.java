package io.converge.console.stuck;

import io.converge.console.inspect.StuckItem;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.internal.Backoff;
import io.converge.core.internal.Require;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a webhook about each newly stuck item, once: {@code POST} of a JSON object
 * ({@code {"kind","id","key","tenant","topic","since","ageSeconds","reason","details"}}) to the configured URL.
 * "Once" holds across restarts and across instances sharing the database: {@link #notifyNew} records each item
 * by {@code INSERT ... ON CONFLICT DO NOTHING} into {@code converge_stuck_notified} (migration {@code stuck},
 * {@code Migrations.apply(ds, "stuck")}), and the POSTs run on the webhook's own thread (never the caller's):
 * it leases one due row at a time ({@code FOR UPDATE SKIP LOCKED}, a lease of twice the timeout plus 10 s,
 * longer than its POST may take), posts it and records the outcome, so no other instance can lease a row while
 * its POST runs. A POST that fails (no answer within the timeout, or a status other than 2xx) is retried with
 * Converge's backoff (doubling from {@code retryBase} up to {@code retryMax}, half random) by whichever instance
 * finds it due, up to {@code maxAttempts}; then it is given up, with an error log. A crash between a POST and its
 * mark may repeat that one call after the lease. Thread-safe; {@link StuckGauges} calls it from its refresh
 * thread and closes it.
 */
public final class StuckWebhook implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(StuckWebhook.class);

  private final NotifiedRows rows;
  private final URI url;
  private final Duration timeout;
  private final int maxAttempts;
  private final Backoff backoff;
  private final HttpClient http;
  private final ExecutorService sender;
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private volatile boolean closed;

  private StuckWebhook(Builder b) {
    this.rows = new NotifiedRows(b.dataSource, b.url);
    this.url = b.url;
    this.timeout = b.timeout;
    this.maxAttempts = b.maxAttempts;
    this.backoff = new Backoff(b.retryBase, b.retryMax, () -> ThreadLocalRandom.current().nextDouble());
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).build();
    this.sender = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "converge-stuck-webhook");
      t.setDaemon(true);
      return t;
    });
  }

  /** A builder; {@code dataSource} and {@code url} are required. */
  public static Builder builder() {
    return new Builder();
  }

  /** The URL posted to. */
  public URI url() {
    return url;
  }

  /**
   * Records each of {@code items} not recorded before (by any instance) and has the webhook's thread post the
   * recorded items that are due (these new ones, and the failed ones whose retry is due). Returns without
   * waiting for the POSTs.
   *
   * @return how many of {@code items} were recorded now (not known before)
   * @throws DatabaseUnavailableException when the database is unreachable
   *     ({@code io.converge.core.DatabaseRefusedException} when it refuses a statement; a failing
   *     webhook is retried, never thrown)
   */
  public int notifyNew(List<StuckItem> items) {
    int recorded = items.isEmpty() ? 0 : rows.record(items);
    schedule();
    return recorded;
  }

  /**
   * Posts the due items, each under a lease of its own, until none is due (or the webhook is closed); on the
   * calling thread. {@link #notifyNew} has the webhook's thread call it.
   *
   * @return how many POSTs succeeded
   * @throws DatabaseUnavailableException when the database is unreachable
   *     ({@code io.converge.core.DatabaseRefusedException} when it refuses a statement)
   */
  public int sendDue() {
    int sent = 0;
    while (!closed && !Thread.currentThread().isInterrupted()) {
      NotifiedRows.Leased row = rows.leaseOne(lease(), maxAttempts);
      if (row == null) {
        return sent;
      }
      if (post(row)) {
        sent++;
      }
    }
    return sent;
  }

  private void schedule() {
    if (closed || !scheduled.compareAndSet(false, true)) {
      return; // a pass is pending: it sees these rows too
    }
    try {
      sender.execute(() -> {
        scheduled.set(false); // a notice arriving from now on schedules another pass
        try {
          sendDue();
        } catch (RuntimeException e) {
          log.warn("Stuck items not notified to {} this time (retried at the next refresh): {}", url, e.toString());
        }
      });
    } catch (RejectedExecutionException e) {
      scheduled.set(false); // closed meanwhile
    }
  }

  /** Posts one leased item and records the outcome; true when the webhook answered 2xx. */
  private boolean post(NotifiedRows.Leased row) {
    String error;
    try {
      int status = http.send(HttpRequest.newBuilder(url).timeout(timeout).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(row.payload())).build(), HttpResponse.BodyHandlers.discarding())
          .statusCode();
      error = status / 100 == 2 ? null : "HTTP " + status;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // closing: the row is posted again after its lease, no attempt counted
      return false;
    } catch (IOException | RuntimeException e) {
      error = e.toString();
    }
    if (error == null) {
      rows.delivered(row);
      log.debug("Stuck {} {} notified to {}", row.kind(), row.id(), url);
      return true;
    }
    int attempts = row.attempts() + 1;
    Duration delay = backoff.delay(attempts);
    rows.failed(row, error, delay);
    if (attempts >= maxAttempts) {
      log.error("Gave up notifying stuck {} {} to {} after {} attempts: {}", row.kind(), row.id(), url, attempts,
          error);
    } else {
      log.warn("Notifying stuck {} {} to {} failed (attempt {} of {}), retrying in {}: {}", row.kind(), row.id(),
          url, attempts, maxAttempts, delay, error);
    }
    return false;
  }

  /**
   * Stops the webhook's thread: a POST under way is interrupted, and waited for at most its timeout plus 1 s.
   * Rows leased and not marked are posted again after their lease.
   */
  @Override
  public void close() {
    closed = true;
    sender.shutdownNow();
    try {
      sender.awaitTermination(timeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private Duration lease() {
    return timeout.multipliedBy(2).plusSeconds(10); // connect + answer timeouts, and the marks
  }

  /** Builds a {@link StuckWebhook}. Not thread-safe. */
  public static final class Builder {

    private DataSource dataSource;
    private URI url;
    private Duration timeout = Duration.ofSeconds(5);
    private int maxAttempts = 10;
    private Duration retryBase = Duration.ofSeconds(1);
    private Duration retryMax = Duration.ofMinutes(5);

    private Builder() {
    }

    /** The database holding {@code converge_stuck_notified}; required. */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = dataSource;
      return this;
    }

    /** The URL to POST to (http or https); required. */
    public Builder url(URI url) {
      this.url = url;
      return this;
    }

    /** How long one POST may take; default 5 s. */
    public Builder timeout(Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    /** The most POSTs per item; default 10. */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /** The retry backoff: doubling from {@code base} up to {@code max}; default 1 s to 5 min. */
    public Builder retry(Duration base, Duration max) {
      this.retryBase = base;
      this.retryMax = max;
      return this;
    }

    /** The webhook. @throws IllegalArgumentException naming the setting and the value when one is invalid */
    public StuckWebhook build() {
      Objects.requireNonNull(dataSource, "stuck.webhook.dataSource");
      Require.that(url != null && ("http".equals(url.getScheme()) || "https".equals(url.getScheme())),
          "stuck.webhook.url", "be an http or https URL", url);
      Require.positive("stuck.webhook.timeout", timeout);
      Require.between("stuck.webhook.maxAttempts", maxAttempts, 1, 1000);
      Require.positive("stuck.webhook.retryBase", retryBase);
      Require.that(retryMax != null && retryMax.compareTo(retryBase) >= 0, "stuck.webhook.retryMax",
          "be at least retryBase " + retryBase, retryMax);
      return new StuckWebhook(this);
    }
  }
}
