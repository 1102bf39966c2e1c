package io.converge.console.inspect;

import io.converge.core.internal.DatabaseErrors;
import io.converge.console.inspect.internal.KindQueries;
import io.converge.console.inspect.internal.KindQueries.Source;
import io.converge.console.internal.Rows;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.internal.Require;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * What is stuck, read from Converge's tables on one database: per {@link StuckKind}, the items with their
 * age and reason, oldest first, and how many are past their threshold (for gauges). A kind whose table does
 * not exist in the schema (a module the application does not use) has no items. Ages are measured by the
 * database's clock. Read-only; stateless apart from its data source and thresholds; thread-safe.
 */
public final class Inspector {

  /**
   * Which items to list. Null fields do not filter. Immutable; the withers return copies.
   *
   * @param tenant only this tenant
   * @param topic only this topic (an Idempotency-Key's request path)
   * @param key only this key (message key, order key, Idempotency-Key, entity id)
   * @param minAge only items at least this old; null: the kind's threshold (only stuck items)
   * @param limit the most items listed, 1 to {@value #MAX_LIMIT}
   */
  public record Filter(String tenant, String topic, String key, Duration minAge, int limit) {

    /** The most items one listing returns. */
    public static final int MAX_LIMIT = 10_000;

    /** Checks the limit and the age. */
    public Filter {
      Require.between("console.filter.limit", limit, 1, MAX_LIMIT);
      if (minAge != null) {
        Require.notNegative("console.filter.minAge", minAge);
      }
      tenant = blankToNull(tenant);
      topic = blankToNull(topic);
      key = blankToNull(key);
    }

    /** The stuck items (past the kind's threshold), at most 100. */
    public static Filter stuck() {
      return new Filter(null, null, null, null, 100);
    }

    /** Every item, whatever its age, at most 100. */
    public static Filter all() {
      return new Filter(null, null, null, Duration.ZERO, 100);
    }

    /** A copy for {@code tenant} only. */
    public Filter tenant(String tenant) {
      return new Filter(tenant, topic, key, minAge, limit);
    }

    /** A copy for {@code topic} only. */
    public Filter topic(String topic) {
      return new Filter(tenant, topic, key, minAge, limit);
    }

    /** A copy for {@code key} only. */
    public Filter key(String key) {
      return new Filter(tenant, topic, key, minAge, limit);
    }

    /** A copy for items at least {@code minAge} old (null: the kind's threshold). */
    public Filter minAge(Duration minAge) {
      return new Filter(tenant, topic, key, minAge, limit);
    }

    /** A copy listing at most {@code limit} items. */
    public Filter limit(int limit) {
      return new Filter(tenant, topic, key, minAge, limit);
    }

    private static String blankToNull(String s) {
      return s == null || s.isBlank() ? null : s.trim();
    }
  }

  /**
   * A kind at a glance.
   *
   * @param kind the kind
   * @param total its items, whatever their age
   * @param stuck those past the threshold
   * @param oldest the age of the oldest item; null when there is none
   * @param threshold the kind's threshold
   */
  public record Summary(StuckKind kind, long total, long stuck, Duration oldest, Duration threshold) {
  }

  private static final String LIST = """
      SELECT id, item_key, tenant, topic, since, reason, details,
             (extract(epoch FROM now() - since) * 1000)::bigint AS age_ms
        FROM (%s) s
       WHERE (CAST(? AS text) IS NULL OR tenant = ?) AND (CAST(? AS text) IS NULL OR topic = ?)
         AND (CAST(? AS text) IS NULL OR item_key = ?)
         AND since <= now() - CAST(? AS bigint) * interval '1 millisecond'
       ORDER BY since, id LIMIT ?
      """;
  private static final String SUMMARY = """
      SELECT count(*), count(*) FILTER (WHERE since <= now() - CAST(? AS bigint) * interval '1 millisecond'),
             (extract(epoch FROM now() - min(since)) * 1000)::bigint
        FROM (%s) s
      """;

  private final DataSource dataSource;
  private final StuckThresholds thresholds;

  private Inspector(DataSource dataSource, StuckThresholds thresholds) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.thresholds = Objects.requireNonNull(thresholds, "thresholds");
  }

  /** The inspector of {@code dataSource} (its current schema holds Converge's tables), default thresholds. */
  public static Inspector of(DataSource dataSource) {
    return of(dataSource, StuckThresholds.defaults());
  }

  /** The inspector of {@code dataSource} with {@code thresholds}. */
  public static Inspector of(DataSource dataSource, StuckThresholds thresholds) {
    return new Inspector(dataSource, thresholds);
  }

  /** The thresholds. */
  public StuckThresholds thresholds() {
    return thresholds;
  }

  /**
   * The items of {@code kind} that pass {@code filter}, oldest first.
   *
   * @throws DatabaseUnavailableException when the database is unreachable
   *     ({@code io.converge.core.DatabaseRefusedException} when it refuses a statement)
   */
  public List<StuckItem> list(StuckKind kind, Filter filter) {
    Source source = KindQueries.of(kind);
    Duration minAge = filter.minAge() != null ? filter.minAge() : thresholds.of(kind);
    try (Connection c = dataSource.getConnection()) {
      if (!Rows.exists(c, source.table())) {
        return List.of();
      }
      try (PreparedStatement ps = c.prepareStatement(LIST.formatted(source.sql()))) {
        int i = 1;
        for (String value : new String[]{filter.tenant(), filter.topic(), filter.key()}) {
          ps.setString(i++, value);
          ps.setString(i++, value);
        }
        ps.setLong(i++, minAge.toMillis());
        ps.setInt(i, filter.limit());
        List<StuckItem> items = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            items.add(new StuckItem(kind, rs.getString("id"), rs.getString("item_key"), rs.getString("tenant"),
                rs.getString("topic"), rs.getTimestamp("since").toInstant(),
                Duration.ofMillis(Math.max(0, rs.getLong("age_ms"))), rs.getString("reason"),
                Rows.details(rs.getArray("details"), false)));
          }
        }
        return items;
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not list the " + kind.title().toLowerCase() + " of the console",
          null, e);
    }
  }

  /** How many items of {@code kind} are past its threshold (the {@code converge.stuck} gauge). */
  public long count(StuckKind kind) {
    return summary(kind).stuck();
  }

  /**
   * How many items {@code kind} has, how many are stuck, and the oldest one's age.
   *
   * @throws DatabaseUnavailableException when the database is unreachable
   *     ({@code io.converge.core.DatabaseRefusedException} when it refuses a statement)
   */
  public Summary summary(StuckKind kind) {
    Source source = KindQueries.of(kind);
    Duration threshold = thresholds.of(kind);
    try (Connection c = dataSource.getConnection()) {
      if (!Rows.exists(c, source.table())) {
        return new Summary(kind, 0, 0, null, threshold);
      }
      try (PreparedStatement ps = c.prepareStatement(SUMMARY.formatted(source.sql()))) {
        ps.setLong(1, threshold.toMillis());
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          long oldest = rs.getLong(3);
          Duration oldestAge = rs.wasNull() ? null : Duration.ofMillis(Math.max(0, oldest));
          return new Summary(kind, rs.getLong(1), rs.getLong(2), oldestAge, threshold);
        }
      }
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Could not count the " + kind.title().toLowerCase() + " of the console",
          null, e);
    }
  }

}
