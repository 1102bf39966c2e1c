package io.converge.consumer.internal;

import static io.converge.consumer.internal.Jdbc.bind;
import static io.converge.consumer.internal.Jdbc.queryInt;
import static io.converge.consumer.internal.Jdbc.update;

import io.converge.core.MessageIds;
import io.converge.core.internal.DayPartitions;
import io.converge.core.internal.NamedStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.Map;

/**
 * The deduplication SQL: the claims ({@code converge_dedup}: the hot path, one round trip per message), their
 * outcomes and the attempt counts of failing messages ({@code converge_consumer_attempt}). The dead-letter rows are
 * {@link DeadLetterStore}'s. Every statement has named parameters ({@code :tenant :group :messageId :topic :key
 * :now}, {@link NamedStatement}). Stateless; every method runs on the caller's connection.
 */
final class DedupStatements {

  /**
   * Where a claim goes (consumer-idem README, "Partitions by day"): the partition of the UTC day of the id's UUIDv7
   * timestamp ({@code :day}, computed from the id alone; null for a foreign id) while that partition exists, else the
   * catch-all (day 1970-01-01). Evaluated when the claim runs, after its lock on converge_dedup: a partition is created
   * and dropped under a lock that conflicts with it (DayPartitions), so the claim sees it either before or after. The
   * partition is looked up in converge_dedup's own schema (the one the INSERT resolves), never through the search
   * path, where another schema's same-named table could stand first: instances with different search paths route an
   * id alike. The claim's transaction is READ COMMITTED (the runners set it): its snapshot is taken after that lock,
   * so {@link #NOT_IN_CATCHALL} sees every catch-all claim committed before a partition was created. Materialized:
   * the claim reads the day twice, the lookup runs once.
   */
  private static final String ROUTE = """
      route AS MATERIALIZED (
        SELECT CASE WHEN %s IS NOT NULL
                    THEN CAST(:day AS date) ELSE DATE '1970-01-01' END AS day)
      """.formatted(DayPartitions.partitionLookup("converge_dedup", "CAST(:day AS date)"));

  /**
   * A claim routed to a day partition is refused when the catch-all holds the id: claimed there before its day's
   * partition existed (a future-dated id, or before the purger created it), or before the migration to partitions.
   * That claim has committed: the partition's creation waited for it. The catch-all is read through its parent (the
   * day's constant prunes the others away), so it is this converge_dedup's, whatever the search path.
   */
  private static final String NOT_IN_CATCHALL = " " + """
      (r.day = DATE '1970-01-01' OR NOT EXISTS (
         SELECT 1 FROM converge_dedup c
          WHERE c.day = DATE '1970-01-01' AND c.tenant = :tenant AND c.consumer_group = :group
            AND c.message_id = :messageId))
      """;

  // Waits on the routed partition's primary key while another transaction holds an uncommitted claim of the same id,
  // then inserts nothing if that transaction committed: the concurrent duplicate sees the winner. The conflict target
  // is left out: a partitioned table has no unique index without its partition key, each partition has its own.
  private static final NamedStatement CLAIM = NamedStatement.parse("WITH " + ROUTE + """
      INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, detail, topic, processed_at, day)
      SELECT :tenant, :group, :messageId, :outcome, :detail, :topic, :now, r.day FROM route r
       WHERE """ + NOT_IN_CATCHALL + """
      ON CONFLICT DO NOTHING
      """);

  /**
   * The hold check of a message with a key: one probe of the partial index {@code converge_dlq_parked_key}, empty
   * while nothing is parked.
   */
  private static final String HOLD_CHECK = """
      WITH held AS (
        SELECT 1 FROM converge_dlq
         WHERE consumer_group = :group AND topic = :topic AND tenant = :tenant AND message_key = :key
           AND status = 'PARKED'
         LIMIT 1),
      """;

  /**
   * The hold check of a message without a key: never held ({@code message_key = NULL} is never true), so the claim of
   * such a message does not read converge_dlq at all (a table and an index fewer to open and lock per message).
   */
  private static final String NO_HOLD = """
      WITH held AS (SELECT 1 WHERE false),
      """;

  /**
   * The hold check ({@link #HOLD_CHECK} or {@link #NO_HOLD}), then the claim and the removal of attempt rows earlier
   * failures left (only when the claim succeeded; any failure of the handler rolls the removal back with the claim,
   * and the failure's outcome is recorded in a transaction of its own). When the message's key has a parked row
   * nothing is claimed. Followed by a result: {@link #COUNT_RESULT} or {@link #REFUSE_UNLESS_CLAIMED}.
   */
  private static String claimCtes(String holdCheck) {
    return holdCheck + ROUTE + """
        , claimed AS (
          INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, detail, topic, processed_at, day)
          SELECT :tenant, :group, :messageId, 'PROCESSED', NULL, :topic, :now, r.day FROM route r
           WHERE NOT EXISTS (SELECT 1 FROM held) AND """ + NOT_IN_CATCHALL + """
          ON CONFLICT DO NOTHING
          RETURNING 1),
        cleared AS (
          DELETE FROM converge_consumer_attempt
           WHERE tenant = :tenant AND consumer_group = :group AND message_id = :messageId
             AND EXISTS (SELECT 1 FROM claimed))
        """;
  }

  /** 2 when the key is held, else 1 (claimed) or 0 (a duplicate). */
  private static final String COUNT_RESULT = """
      SELECT (SELECT count(*) FROM claimed) + CASE WHEN EXISTS (SELECT 1 FROM held) THEN 2 ELSE 0 END
      """;

  /** The error text that {@link #claimOrRefuse} statements fail with for a duplicate. */
  static final String REFUSED_DUPLICATE = "converge-claim-duplicate";

  /** The error text that {@link #claimOrRefuse} statements fail with for a held key. */
  static final String REFUSED_HELD = "converge-claim-held";

  /** 1 when claimed; else its text cast to an integer fails with {@link #REFUSED_HELD} or {@link #REFUSED_DUPLICATE}. */
  private static final String REFUSE_UNLESS_CLAIMED = """
      SELECT (CASE WHEN EXISTS (SELECT 1 FROM held) THEN '%s' WHEN EXISTS (SELECT 1 FROM claimed) THEN '1'
                   ELSE '%s' END)::int""".formatted(REFUSED_HELD, REFUSED_DUPLICATE);

  /** The hot path in one round trip, for a message with a key: the claim's CTEs, then {@link #COUNT_RESULT}. */
  static final NamedStatement CLAIM_FOR_HANDLER = NamedStatement.parse(claimCtes(HOLD_CHECK) + COUNT_RESULT);

  /** {@link #CLAIM_FOR_HANDLER} for a message without a key. */
  static final NamedStatement CLAIM_FOR_HANDLER_KEYLESS = NamedStatement.parse(claimCtes(NO_HOLD) + COUNT_RESULT);

  /** The result of {@link #claimForHandler} when the key is held. */
  static final int HELD = 2;

  /**
   * The claim's CTEs as a statement that fails unless it claimed ({@link #REFUSE_UNLESS_CLAIMED}), so that a
   * statement sent after it in the same round trip never runs for a duplicate or a held key: the error aborts the
   * transaction first and the server skips the rest of the pipeline. The parameters of a statement sent after it
   * start after its {@link NamedStatement#parameterCount()}. For a message with a key.
   */
  static final NamedStatement CLAIM_OR_REFUSE = NamedStatement.parse(claimCtes(HOLD_CHECK) + REFUSE_UNLESS_CLAIMED);

  /** {@link #CLAIM_OR_REFUSE} for a message without a key. */
  static final NamedStatement CLAIM_OR_REFUSE_KEYLESS = NamedStatement.parse(claimCtes(NO_HOLD)
      + REFUSE_UNLESS_CLAIMED);

  /** {@link #CLAIM_OR_REFUSE} or, for a message without a key ({@code key} null), {@link #CLAIM_OR_REFUSE_KEYLESS}. */
  static NamedStatement claimOrRefuse(String key) {
    return key == null ? CLAIM_OR_REFUSE_KEYLESS : CLAIM_OR_REFUSE;
  }

  private static final NamedStatement SET_OUTCOME = NamedStatement.parse("""
      UPDATE converge_dedup SET outcome = :outcome, detail = :detail
      WHERE tenant = :tenant AND consumer_group = :group AND message_id = :messageId
      """);

  private static final NamedStatement RECORD_ATTEMPT = NamedStatement.parse(
      """
          INSERT INTO converge_consumer_attempt AS a
            (tenant, consumer_group, message_id, attempts, last_error, first_failed_at, last_failed_at)
          VALUES (:tenant, :group, :messageId, 1, :error, :now, :now)
          ON CONFLICT (tenant, consumer_group, message_id)
          DO UPDATE SET attempts = a.attempts + 1, last_error = EXCLUDED.last_error, last_failed_at = EXCLUDED.last_failed_at
          RETURNING attempts
          """);

  private static final NamedStatement ATTEMPTS = NamedStatement.parse("""
      SELECT attempts FROM converge_consumer_attempt
      WHERE tenant = :tenant AND consumer_group = :group AND message_id = :messageId
      """);

  private static final NamedStatement CLEAR_ATTEMPTS = NamedStatement.parse(
      """
          DELETE FROM converge_consumer_attempt WHERE tenant = :tenant AND consumer_group = :group AND message_id = :messageId
          """);

  private DedupStatements() {
  }

  /** The parameters naming one message of one group. */
  private static Map<String, Object> message(String tenant, String group, String messageId) {
    Map<String, Object> values = new HashMap<>();
    values.put("tenant", tenant);
    values.put("group", group);
    values.put("messageId", messageId);
    return values;
  }

  /** {@link #message} and the {@code :day} of a claim's {@link #ROUTE}. */
  private static Map<String, Object> routed(String tenant, String group, String messageId) {
    Map<String, Object> values = message(tenant, group, messageId);
    LocalDate day = MessageIds.dayOf(messageId);
    values.put("day", day == null ? null : day.toString());
    return values;
  }

  /** The parameters of the claims for a handler ({@link #CLAIM_FOR_HANDLER}, {@link #claimOrRefuse}, keyless or not). */
  private static Map<String, Object> claim(String tenant, String group, String messageId, String topic, String key,
      Instant now) {
    Map<String, Object> values = routed(tenant, group, messageId);
    values.put("topic", topic);
    values.put("key", key);
    values.put("now", now);
    return values;
  }

  /** Binds the parameters of {@link #claimOrRefuse}{@code (key)} (1 to its {@link NamedStatement#parameterCount()}). */
  static void bindClaim(PreparedStatement ps, String tenant, String group, String messageId, String topic, String key,
      Instant now) throws SQLException {
    bind(ps, claimOrRefuse(key).arguments(claim(tenant, group, messageId, topic, key, now)));
  }

  /** True when this transaction now owns the id; false when it was already claimed (a duplicate). */
  static boolean claim(Connection c, String tenant, String group, String messageId, String outcome, String detail,
      String topic, Instant now) throws SQLException {
    Map<String, Object> values = routed(tenant, group, messageId);
    values.put("outcome", outcome);
    values.put("detail", detail);
    values.put("topic", topic);
    values.put("now", now);
    return update(c, CLAIM.sql(), CLAIM.arguments(values)) == 1;
  }

  /**
   * Claims the id for a first run of the handler and clears earlier attempt rows, in one round trip.
   *
   * @return 1 when this transaction now owns the id, 0 for a duplicate, {@link #HELD} when the key is held
   */
  static int claimForHandler(Connection c, String tenant, String group, String messageId, String topic, String key,
      Instant now) throws SQLException {
    NamedStatement statement = key == null ? CLAIM_FOR_HANDLER_KEYLESS : CLAIM_FOR_HANDLER;
    return queryInt(c, statement.sql(), 0, statement.arguments(claim(tenant, group, messageId, topic, key, now)));
  }

  /** Sets the outcome of a claim this transaction holds. */
  static void setOutcome(Connection c, String tenant, String group, String messageId, String outcome, String detail)
      throws SQLException {
    Map<String, Object> values = message(tenant, group, messageId);
    values.put("outcome", outcome);
    values.put("detail", detail);
    update(c, SET_OUTCOME.sql(), SET_OUTCOME.arguments(values));
  }

  static int recordAttempt(Connection c, String tenant, String group, String messageId, String error, Instant now)
      throws SQLException {
    Map<String, Object> values = message(tenant, group, messageId);
    values.put("error", error);
    values.put("now", now);
    return queryInt(c, RECORD_ATTEMPT.sql(), 0, RECORD_ATTEMPT.arguments(values));
  }

  static int attempts(Connection c, String tenant, String group, String messageId) throws SQLException {
    return queryInt(c, ATTEMPTS.sql(), 0, ATTEMPTS.arguments(message(tenant, group, messageId)));
  }

  static void clearAttempts(Connection c, String tenant, String group, String messageId) throws SQLException {
    update(c, CLEAR_ATTEMPTS.sql(), CLEAR_ATTEMPTS.arguments(message(tenant, group, messageId)));
  }
}
