package io.converge.console.stuck;

import io.converge.console.inspect.StuckItem;
import io.converge.producer.DatabaseUnavailableException;
import io.converge.producer.support.Backoff;
import io.converge.producer.support.Require;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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

  private static final String RECORD = """
      INSERT INTO converge_stuck_notified (kind, item_id, payload, next_attempt_at)
      VALUES (?, ?, ?, now())
      ON CONFLICT DO NOTHING""";
  // one row per lease: the lease outlasts its POST, so no other instance takes the row meanwhile
  private static final String LEASE_ONE = """
      UPDATE converge_stuck_notified SET next_attempt_at = now() + CAST(? AS bigint) * interval '1 millisecond'
       WHERE (kind, item_id) = (SELECT kind, item_id FROM converge_stuck_notified
                                 WHERE delivered_at IS NULL AND attempts < ? AND next_attempt_at <= now()
                                 ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING kind, item_id, payload, attempts""";
  private static final String DELIVERED = """
      UPDATE converge_stuck_notified SET delivered_at = now(), last_error = NULL WHERE kind = ? AND item_id = ?""";
  private static final String FAILED = """
      UPDATE converge_stuck_notified SET attempts = attempts + 1, last_error = ?,
             next_attempt_at = now() + CAST(? AS bigint) * interval '1 millisecond'
       WHERE kind = ? AND item_id = ?""";

  private final DataSource dataSource;
  private final URI url;
  private final Duration timeout;
  private final int maxAttempts;
  private final Backoff backoff;
  private final HttpClient http;
  private final ExecutorService sender;
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private volatile boolean closed;

  private StuckWebhook(Builder b) {
    this.dataSource = b.dataSource;
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
   * @throws DatabaseUnavailableException when the database fails (a failing webhook is retried, never thrown)
   */
  public int notifyNew(List<StuckItem> items) {
    int recorded = 0;
    if (!items.isEmpty()) {
      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(true);
        try (PreparedStatement ps = c.prepareStatement(RECORD)) {
          for (StuckItem item : items) {
            ps.setString(1, item.kind().slug());
            ps.setString(2, item.id());
            ps.setString(3, json(item));
            recorded += ps.executeUpdate();
          }
        }
      } catch (SQLException e) {
        throw new DatabaseUnavailableException("Could not record the stuck items notified to " + url, null, e);
      }
    }
    schedule();
    return recorded;
  }

  /**
   * Posts the due items, each under a lease of its own, until none is due (or the webhook is closed); on the
   * calling thread. {@link #notifyNew} has the webhook's thread call it.
   *
   * @return how many POSTs succeeded
   * @throws DatabaseUnavailableException when the database fails
   */
  public int sendDue() {
    int sent = 0;
    while (!closed && !Thread.currentThread().isInterrupted()) {
      String[] row; // kind, id, payload, attempts
      try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(LEASE_ONE)) {
        c.setAutoCommit(true);
        ps.setLong(1, lease().toMillis());
        ps.setInt(2, maxAttempts);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return sent;
          }
          row = new String[]{rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)};
        }
      } catch (SQLException e) {
        throw new DatabaseUnavailableException("Could not lease the stuck items to notify to " + url, null, e);
      }
      if (post(row[0], row[1], row[2], Integer.parseInt(row[3]))) {
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
  private boolean post(String kind, String id, String payload, int attemptsBefore) {
    String error;
    try {
      int status = http.send(HttpRequest.newBuilder(url).timeout(timeout).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(payload)).build(), HttpResponse.BodyHandlers.discarding())
          .statusCode();
      error = status / 100 == 2 ? null : "HTTP " + status;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // closing: the row is posted again after its lease, no attempt counted
      return false;
    } catch (IOException | RuntimeException e) {
      error = e.toString();
    }
    if (error == null) {
      record(true, null, 0, kind, id);
      log.debug("Stuck {} {} notified to {}", kind, id, url);
      return true;
    }
    int attempts = attemptsBefore + 1;
    Duration delay = backoff.delay(attempts);
    record(false, error, delay.toMillis(), kind, id);
    if (attempts >= maxAttempts) {
      log.error("Gave up notifying stuck {} {} to {} after {} attempts: {}", kind, id, url, attempts, error);
    } else {
      log.warn("Notifying stuck {} {} to {} failed (attempt {} of {}), retrying in {}: {}", kind, id, url, attempts,
          maxAttempts, delay, error);
    }
    return false;
  }

  private void record(boolean delivered, String error, long delayMillis, String kind, String id) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(delivered ? DELIVERED : FAILED)) {
      c.setAutoCommit(true);
      int i = 1;
      if (!delivered) {
        ps.setString(i++, error);
        ps.setLong(i++, delayMillis);
      }
      ps.setString(i++, kind);
      ps.setString(i, id);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new DatabaseUnavailableException("Could not record the notification of stuck " + kind + " " + id + " to "
          + url, null, e);
    }
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

  /** The JSON object posted for {@code item}. */
  static String json(StuckItem item) {
    StringBuilder b = new StringBuilder("{");
    field(b, "kind", item.kind().slug()).append(',');
    field(b, "id", item.id()).append(',');
    field(b, "key", item.key()).append(',');
    field(b, "tenant", item.tenant()).append(',');
    field(b, "topic", item.topic()).append(',');
    field(b, "since", item.since().toString()).append(',');
    b.append("\"ageSeconds\":").append(item.age().toSeconds()).append(',');
    field(b, "reason", item.reason()).append(",\"details\":{");
    boolean first = true;
    for (Map.Entry<String, String> e : item.details().entrySet()) {
      if (!first) {
        b.append(',');
      }
      first = false;
      field(b, e.getKey(), e.getValue());
    }
    return b.append("}}").toString();
  }

  private static StringBuilder field(StringBuilder b, String name, String value) {
    quote(b, name).append(':');
    return value == null ? b.append("null") : quote(b, value);
  }

  private static StringBuilder quote(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      switch (ch) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (ch < 0x20) {
            b.append(String.format("\\u%04x", (int) ch));
          } else {
            b.append(ch);
          }
        }
      }
    }
    return b.append('"');
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
