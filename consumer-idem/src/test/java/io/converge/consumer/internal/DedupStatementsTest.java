package io.converge.consumer.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The claim statements composed from named fragments are the ones written out here with positional parameters
 * (and the refusing one derived from it by cutting its text at its last SELECT).
 */
class DedupStatementsTest {

  private static final String HOLD_CHECK = """
      WITH held AS (
        SELECT 1 FROM converge_dlq
         WHERE consumer_group = ? AND topic = ? AND tenant = ? AND message_key = ? AND status = 'PARKED'
         LIMIT 1),
      """;

  private static final String BEFORE_CTES = HOLD_CHECK + """
      route AS MATERIALIZED (
        SELECT CASE WHEN to_regclass((SELECT relnamespace::regnamespace::text FROM pg_class
                                       WHERE oid = 'converge_dedup'::regclass)
                                     || '.converge_dedup_p' || to_char(CAST(? AS date), 'YYYYMMDD')) IS NOT NULL
                    THEN CAST(? AS date) ELSE DATE '1970-01-01' END AS day)
      , claimed AS (
        INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, detail, topic, processed_at, day)
        SELECT ?, ?, ?, 'PROCESSED', NULL, ?, ?, r.day FROM route r
         WHERE NOT EXISTS (SELECT 1 FROM held) AND (r.day = DATE '1970-01-01' OR NOT EXISTS (
           SELECT 1 FROM converge_dedup c WHERE c.day = DATE '1970-01-01' AND c.tenant = ? AND c.consumer_group = ?
             AND c.message_id = ?))
        ON CONFLICT DO NOTHING
        RETURNING 1),
      cleared AS (
        DELETE FROM converge_consumer_attempt
         WHERE tenant = ? AND consumer_group = ? AND message_id = ? AND EXISTS (SELECT 1 FROM claimed))
      """;

  /** The positional order: the hold check's, the route's, the claim's, the catch-all probe's, the attempts'. */
  private static final String[] BEFORE_ORDER = {"group", "topic", "tenant", "key", "day", "day", "tenant", "group",
      "messageId", "topic", "now", "tenant", "group", "messageId", "tenant", "group", "messageId"};

  private static String normalised(String sql) {
    return sql.replaceAll("\\s+", " ").strip();
  }

  @Test
  void theHandlersClaimIsTheStatementBoundBefore() {
    assertThat(normalised(DedupStatements.CLAIM_FOR_HANDLER.sql())).isEqualTo(normalised(BEFORE_CTES
        + "SELECT (SELECT count(*) FROM claimed) + CASE WHEN EXISTS (SELECT 1 FROM held) THEN 2 ELSE 0 END\n"));
    assertThat(DedupStatements.CLAIM_FOR_HANDLER.names()).containsExactly(BEFORE_ORDER);
  }

  @Test
  void thePipelinedClaimRefusesWithTheSameTextsAndItsParametersComeFirst() {
    assertThat(normalised(DedupStatements.CLAIM_OR_REFUSE.sql())).isEqualTo(normalised(BEFORE_CTES
        + "SELECT (CASE WHEN EXISTS (SELECT 1 FROM held) THEN 'converge-claim-held'"
        + " WHEN EXISTS (SELECT 1 FROM claimed) THEN '1' ELSE 'converge-claim-duplicate' END)::int"));
    assertThat(DedupStatements.CLAIM_OR_REFUSE.sql()).doesNotEndWith("\n").doesNotEndWith(";");
    assertThat(DedupStatements.CLAIM_OR_REFUSE.names()).containsExactly(BEFORE_ORDER);
    assertThat(DedupStatements.CLAIM_OR_REFUSE.parameterCount()).as("the handler's parameters shift by this")
        .isEqualTo(17);
  }

  /** A message without a key is never held: its claim is the same statement without the probe of converge_dlq. */
  @Test
  void aKeylessMessagesClaimDoesNotReadTheDeadLetterTable() {
    String keyless = "WITH held AS (SELECT 1 WHERE false),";
    assertThat(normalised(DedupStatements.CLAIM_FOR_HANDLER_KEYLESS.sql()))
        .isEqualTo(normalised(DedupStatements.CLAIM_FOR_HANDLER.sql()).replace(normalised(HOLD_CHECK), keyless))
        .doesNotContain("converge_dlq");
    assertThat(normalised(DedupStatements.CLAIM_OR_REFUSE_KEYLESS.sql()))
        .isEqualTo(normalised(DedupStatements.CLAIM_OR_REFUSE.sql()).replace(normalised(HOLD_CHECK), keyless));
    assertThat(DedupStatements.claimOrRefuse(null)).isSameAs(DedupStatements.CLAIM_OR_REFUSE_KEYLESS);
    assertThat(DedupStatements.claimOrRefuse("order-1")).isSameAs(DedupStatements.CLAIM_OR_REFUSE);
    assertThat(DedupStatements.CLAIM_OR_REFUSE_KEYLESS.names()).containsExactly(
        java.util.Arrays.copyOfRange(BEFORE_ORDER, 4, BEFORE_ORDER.length));
    assertThat(DedupStatements.CLAIM_OR_REFUSE_KEYLESS.parameterCount()).isEqualTo(13);
  }
}
