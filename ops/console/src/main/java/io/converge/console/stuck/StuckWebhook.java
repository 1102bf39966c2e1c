package io.converge.console.stuck;

import io.converge.console.inspect.StuckItem;
import io.converge.producer.DatabaseUnavailableException;
import io.converge.producer.support.Backoff;
import io.converge.producer.support.Require;
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
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a webhook about each newly stuck item, once: {@code POST} of a JSON object
 * ({@code {"kind","id","key","tenant","topic","since","ageSeconds","reason","details"}}) to the configured URL.
 * "Once" holds across restarts and across instances sharing the database: an item is claimed by
 * {@code INSERT ... ON CONFLICT DO NOTHING} into {@code converge_stuck_notified} (migration {@code stuck},
 * {@code Migrations.apply(ds, "stuck")}) before its POST, and only the instance that inserted it posts. A POST
 * that fails (no answer within the timeout, or a status other than 2xx) is retried with Converge's backoff
 * (doubling from {@code retryBase} up to {@code retryMax}, half random) by whichever instance finds it due, up
 * to {@code maxAttempts}; then it is given up, with an error log. A crash between a POST and its mark may repeat
 * that one call after the lease ({@code timeout} + 30 s). Thread-safe; {@link StuckGauges} calls it from its
 * refresh thread.
 */
public final class StuckWebhook {

  private static final Logger log = LoggerFactory.getLogger(StuckWebhook.class);

  private static final String CLAIM = """
      INSERT INTO converge_stuck_notified (kind, item_id, payload, next_attempt_at)
      VALUES (?, ?, ?, now() + CAST(? AS bigint) * interval '1 millisecond')
      ON CONFLICT DO NOTHING""";
  private static final String CLAIM_DUE = """
      UPDATE converge_stuck_notified SET next_attempt_at = now() + CAST(? AS bigint) * interval '1 millisecond'
       WHERE (kind, item_id) IN (SELECT kind, item_id FROM converge_stuck_notified
                                  WHERE delivered_at IS NULL AND attempts < ? AND next_attempt_at <= now()
                                  ORDER BY next_attempt_at LIMIT 100 FOR UPDATE SKIP LOCKED)
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

  private StuckWebhook(Builder b) {
    this.dataSource = b.dataSource;
    this.url = b.url;
    this.timeout = b.timeout;
    this.maxAttempts = b.maxAttempts;
    this.backoff = new Backoff(b.retryBase, b.retryMax, () -> ThreadLocalRandom.current().nextDouble());
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).build();
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
   * Claims each of {@code items} not claimed before (by any instance) and posts it; then posts the claimed items
   * whose retry is due.
   *
   * @return how many POSTs succeeded
   * @throws DatabaseUnavailableException when the database fails (a failing webhook is retried, never thrown)
   */
  public int notifyNew(List<StuckItem> items) {
    int sent = 0;
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      for (StuckItem item : items) {
        String payload = json(item);
        try (PreparedStatement ps = c.prepareStatement(CLAIM)) {
          ps.setString(1, item.kind().slug());
          ps.setString(2, item.id());
          ps.setString(3, payload);
          ps.setLong(4, lease().toMillis());
          if (ps.executeUpdate() == 1 && post(c, item.kind().slug(), item.id(), payload, 0)) {
            sent++;
          }
        }
      }
      return sent + retryDue(c);
    } catch (SQLException e) {
      throw new DatabaseUnavailableException("Could not record the stuck items notified to " + url, null, e);
    }
  }

  private int retryDue(Connection c) throws SQLException {
    int sent = 0;
    try (PreparedStatement ps = c.prepareStatement(CLAIM_DUE)) {
      ps.setLong(1, lease().toMillis());
      ps.setInt(2, maxAttempts);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          if (post(c, rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4))) {
            sent++;
          }
        }
      }
    }
    return sent;
  }

  /** Posts one item and records the outcome; true when the webhook answered 2xx. */
  private boolean post(Connection c, String kind, String id, String payload, int attemptsBefore) throws SQLException {
    String error;
    try {
      HttpResponse<Void> response = http.send(HttpRequest.newBuilder(url).timeout(timeout)
          .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(payload)).build(),
          HttpResponse.BodyHandlers.discarding());
      if (response.statusCode() / 100 == 2) {
        update(c, DELIVERED, kind, id);
        log.debug("Stuck {} {} notified to {}", kind, id, url);
        return true;
      }
      error = "HTTP " + response.statusCode();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      error = "interrupted";
    } catch (Exception e) {
      error = e.toString();
    }
    int attempts = attemptsBefore + 1;
    Duration delay = backoff.delay(attempts);
    try (PreparedStatement ps = c.prepareStatement(FAILED)) {
      ps.setString(1, error);
      ps.setLong(2, delay.toMillis());
      ps.setString(3, kind);
      ps.setString(4, id);
      ps.executeUpdate();
    }
    if (attempts >= maxAttempts) {
      log.error("Gave up notifying stuck {} {} to {} after {} attempts: {}", kind, id, url, attempts, error);
    } else {
      log.warn("Notifying stuck {} {} to {} failed (attempt {} of {}), retrying in {}: {}", kind, id, url, attempts,
          maxAttempts, delay, error);
    }
    return false;
  }

  private Duration lease() {
    return timeout.plusSeconds(30);
  }

  private static void update(Connection c, String sql, String kind, String id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, kind);
      ps.setString(2, id);
      ps.executeUpdate();
    }
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
