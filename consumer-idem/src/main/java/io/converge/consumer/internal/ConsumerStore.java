package io.converge.consumer.internal;

import static io.converge.consumer.internal.Jdbc.bind;
import static io.converge.consumer.internal.Jdbc.queryInt;
import static io.converge.consumer.internal.Jdbc.update;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;

/**
 * The SQL of the claims ({@code converge_dedup}: the hot path, one round trip per message), their outcomes and the
 * attempt counts of failing messages ({@code converge_consumer_attempt}). The dead-letter rows are
 * {@link DeadLetterStore}'s. Stateless; every method runs on the caller's connection.
 */
final class ConsumerStore {

  // Waits on the primary key while another transaction holds an uncommitted claim of the same id,
  // then inserts nothing if that transaction committed: the concurrent duplicate sees the winner.
  private static final String CLAIM = """
      INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, detail, topic, processed_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (tenant, consumer_group, message_id) DO NOTHING
      """;

  /**
   * The hot path in one round trip: the hold check, the claim and the removal of attempt rows earlier
   * failures left (only when the claim succeeded; any failure of the handler rolls the removal back with the
   * claim, and the failure's outcome is recorded in a transaction of its own). When the message's key has a
   * parked row nothing is claimed and the result is 2 (held); else 1 (claimed) or 0 (a duplicate). The hold
   * check is one probe of the partial index {@code converge_dlq_parked_key}, empty while nothing is parked;
   * a message without key never matches ({@code message_key = NULL} is not true).
   */
  private static final String CLAIM_FOR_HANDLER = """
      WITH held AS (
        SELECT 1 FROM converge_dlq
         WHERE consumer_group = ? AND topic = ? AND tenant = ? AND message_key = ? AND status = 'PARKED'
         LIMIT 1),
      claimed AS (
        INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, detail, topic, processed_at)
        SELECT ?, ?, ?, 'PROCESSED', NULL, ?, ? WHERE NOT EXISTS (SELECT 1 FROM held)
        ON CONFLICT (tenant, consumer_group, message_id) DO NOTHING
        RETURNING 1),
      cleared AS (
        DELETE FROM converge_consumer_attempt
         WHERE tenant = ? AND consumer_group = ? AND message_id = ? AND EXISTS (SELECT 1 FROM claimed))
      SELECT (SELECT count(*) FROM claimed) + CASE WHEN EXISTS (SELECT 1 FROM held) THEN 2 ELSE 0 END
      """;

  /** The result of {@link #claimForHandler} when the key is held. */
  static final int HELD = 2;

  /** The error text that {@link #CLAIM_OR_REFUSE} fails with for a duplicate. */
  static final String REFUSED_DUPLICATE = "converge-claim-duplicate";

  /** The error text that {@link #CLAIM_OR_REFUSE} fails with for a held key. */
  static final String REFUSED_HELD = "converge-claim-held";

  /**
   * {@link #CLAIM_FOR_HANDLER} as a statement that fails unless it claimed (its text cast to an integer
   * fails with {@link #REFUSED_DUPLICATE} or {@link #REFUSED_HELD}), so that a statement sent after it in
   * the same round trip never runs for a duplicate or a held key: the error aborts the transaction first
   * and the server skips the rest of the pipeline. Same parameters as {@link #CLAIM_FOR_HANDLER}.
   */
  static final String CLAIM_OR_REFUSE = CLAIM_FOR_HANDLER.substring(0,
      CLAIM_FOR_HANDLER.lastIndexOf("\nSELECT (SELECT count") + 1)
      + "SELECT (CASE WHEN EXISTS (SELECT 1 FROM held) THEN '" + REFUSED_HELD + "'"
      + " WHEN EXISTS (SELECT 1 FROM claimed) THEN '1' ELSE '" + REFUSED_DUPLICATE + "' END)::int";

  /** The number of parameters of {@link #CLAIM_FOR_HANDLER} and {@link #CLAIM_OR_REFUSE}. */
  static final int CLAIM_PARAMETERS = 12;

  /** Binds the parameters of {@link #CLAIM_OR_REFUSE} (1 to {@link #CLAIM_PARAMETERS}). */
  static void bindClaim(PreparedStatement ps, String tenant, String group, String messageId, String topic, String key,
      Instant now) throws SQLException {
    bind(ps, group, topic, tenant, key, tenant, group, messageId, topic, now, tenant, group, messageId);
  }

  private static final String SET_OUTCOME = """
      UPDATE converge_dedup SET outcome = ?, detail = ? WHERE tenant = ? AND consumer_group = ? AND message_id = ?
      """;

  private static final String RECORD_ATTEMPT = """
      INSERT INTO converge_consumer_attempt AS a
        (tenant, consumer_group, message_id, attempts, last_error, first_failed_at, last_failed_at)
      VALUES (?, ?, ?, 1, ?, ?, ?)
      ON CONFLICT (tenant, consumer_group, message_id)
      DO UPDATE SET attempts = a.attempts + 1, last_error = EXCLUDED.last_error, last_failed_at = EXCLUDED.last_failed_at
      RETURNING attempts
      """;

  private static final String ATTEMPTS = """
      SELECT attempts FROM converge_consumer_attempt WHERE tenant = ? AND consumer_group = ? AND message_id = ?
      """;

  private static final String CLEAR_ATTEMPTS = """
      DELETE FROM converge_consumer_attempt WHERE tenant = ? AND consumer_group = ? AND message_id = ?
      """;

  private ConsumerStore() {
  }

  /** True when this transaction now owns the id; false when it was already claimed (a duplicate). */
  static boolean claim(Connection c, String tenant, String group, String messageId, String outcome, String detail,
      String topic, Instant now) throws SQLException {
    return update(c, CLAIM, tenant, group, messageId, outcome, detail, topic, now) == 1;
  }

  /**
   * Claims the id for a first run of the handler and clears earlier attempt rows, in one round trip.
   * True when this transaction now owns the id; false for a duplicate.
   */
  static int claimForHandler(Connection c, String tenant, String group, String messageId, String topic, String key,
      Instant now) throws SQLException {
    return queryInt(c, CLAIM_FOR_HANDLER, 0, group, topic, tenant, key, tenant, group, messageId, topic, now, tenant,
        group, messageId);
  }

  /** Sets the outcome of a claim this transaction holds. */
  static void setOutcome(Connection c, String tenant, String group, String messageId, String outcome, String detail)
      throws SQLException {
    update(c, SET_OUTCOME, outcome, detail, tenant, group, messageId);
  }

  static int recordAttempt(Connection c, String tenant, String group, String messageId, String error, Instant now)
      throws SQLException {
    return queryInt(c, RECORD_ATTEMPT, 0, tenant, group, messageId, error, now, now);
  }

  static int attempts(Connection c, String tenant, String group, String messageId) throws SQLException {
    return queryInt(c, ATTEMPTS, 0, tenant, group, messageId);
  }

  static void clearAttempts(Connection c, String tenant, String group, String messageId) throws SQLException {
    update(c, CLEAR_ATTEMPTS, tenant, group, messageId);
  }
}
