package io.converge.console.inspect.internal;

import io.converge.console.inspect.StuckKind;
import io.converge.outbox.OutboxLines;
import java.util.EnumMap;
import java.util.Map;

/**
 * Where the items of each kind come from: one query per kind over the module's own tables, giving the
 * columns {@code id, item_key, tenant, topic, since, reason, details} (details: a {@code text[]} of name,
 * value pairs), and the table whose absence means the kind is not in use (an empty list). The stores'
 * own listings ({@code Outbox.parked}, {@code ConsumerOps.parked}, ...) have neither filters nor keys and
 * tenants, so the console filters these in SQL; its actions use the stores. Immutable.
 */
public final class KindQueries {

  /** A kind's source query and the table that must exist for it. */
  public record Source(String table, String sql) {
  }

  /** Over both tables of the Pulsar log (the view of pulsar migration V4); a transaction's key and topic: the least. */
  private static final String PULSAR = """
      SELECT '(' || t.txn_most || ',' || t.txn_least || ')' AS id,
             (SELECT min(k) FROM unnest(t.msg_keys) k) AS item_key,
             NULL::text AS tenant,
             (SELECT min(x) FROM unnest(t.topics) x) AS topic,
             %s AS since,
             %s AS reason,
             ARRAY['group', t.producer_group,
                   'messages', cardinality(t.message_ids)::text,
                   'attempts', t.attempts::text, 'deadline', t.deadline::text,
                   'next attempt', coalesce(t.next_attempt_at::text, '')] AS details
        FROM converge_pulsar_logged t WHERE %s
      """;

  private static final Map<StuckKind, Source> SOURCES = new EnumMap<>(StuckKind.class);

  static {
    // a ticket's message (past the retention) may have a waiting row too: the ticket says more. A row is one attempt
    // of a half message (V6): its id names the attempt, MESSAGE_ID:ATTEMPT, so that two waiting attempts of a
    // message id are two items (and notified apart); a ticket (no attempt) keeps the message id its action takes
    SOURCES.put(StuckKind.ROCKETMQ_UNIT, new Source("converge_txn_end", """
        SELECT e.message_id || ':' || coalesce(e.attempt, '') AS id, e.msg_key AS item_key, e.tenant, e.topic, e.since,
               e.reason || CASE WHEN e.checks > 0
                                THEN '; ' || e.checks || ' check-back(s), the last answered ' || e.answer
                                ELSE '; waiting for the broker''s check-back' END AS reason,
               ARRAY['group', e.producer_group, 'message id', e.message_id,
                     'END', coalesce(e.end_state, 'unknown'), 'checks', e.checks::text,
                     'last check', coalesce(e.last_check_at::text, '-'), 'attempt', coalesce(e.attempt, '')] AS details
          FROM converge_txn_end e
         WHERE e.status = 'WAITING'
           AND NOT EXISTS (SELECT 1 FROM converge_txn_ticket t WHERE t.message_id = e.message_id AND t.status = 'OPEN')
        UNION ALL
        SELECT message_id AS id, NULL::text AS item_key, NULL::text AS tenant, topic, created_at AS since,
               kind || ': ' || reason AS reason,
               ARRAY['group', producer_group, 'message id', message_id, 'checks', checks::text,
                     'last check', last_check_at::text] AS details
          FROM converge_txn_ticket WHERE status = 'OPEN'
        """));
    SOURCES.put(StuckKind.PULSAR_TXN, new Source("converge_pulsar_logged", PULSAR.formatted("t.created_at",
        "CASE WHEN t.attempts > 0 THEN 'recovery retrying after ' || t.attempts || ' failed attempt(s): '"
            + " || coalesce(t.reason, '') ELSE 'open: its Pulsar commit is not confirmed yet; the recovery scan of its"
            + " group commits or re-publishes it' END",
        "t.parked_at IS NULL")));
    SOURCES.put(StuckKind.PULSAR_RECOVERY, new Source("converge_pulsar_logged", PULSAR.formatted("t.parked_at",
        "'parked after ' || t.attempts || ' attempt(s): ' || coalesce(t.reason, '')", "t.parked_at IS NOT NULL")));
    SOURCES.put(StuckKind.OUTBOX_LAG, new Source("converge_outbox", """
        SELECT o.message_id AS id, o.order_key AS item_key,
               o.tenant, o.topic,
               o.created_at AS since,
               CASE WHEN o.attempts > 0
                    THEN 'send failed ' || o.attempts || ' time(s), retrying: ' || coalesce(o.last_error, '')
                    ELSE 'waiting for a relay' END AS reason,
               ARRAY['group', o.producer_group, 'seq', o.seq::text, 'attempts', o.attempts::text,
                     'next attempt', coalesce(o.next_attempt_at::text, '')] AS details
          FROM converge_outbox o
         WHERE o.published_at IS NULL AND o.parked_at IS NULL
           AND NOT EXISTS (%s)
        """.formatted(OutboxLines.EARLIER_PARKED)));
    SOURCES.put(StuckKind.OUTBOX_PARKED, new Source("converge_outbox", """
        SELECT o.message_id AS id, o.order_key AS item_key,
               o.tenant, o.topic,
               coalesce(o.parked_at, o.created_at) AS since,
               'parked after ' || o.attempts || ' attempt(s): ' || coalesce(o.last_error, '') AS reason,
               ARRAY['group', o.producer_group, 'seq', o.seq::text, 'attempts', o.attempts::text,
                     'rows waiting behind it', (%s)::text,
                     'written', o.created_at::text] AS details
          FROM converge_outbox o WHERE o.published_at IS NULL AND o.parked_at IS NOT NULL
        """.formatted(OutboxLines.COUNT_BEHIND)));
    // details: the converge-schema header (type/major.minor, issue 34) out of the percent-encoded name=value lines
    SOURCES.put(StuckKind.CONSUMER_DLQ, new Source("converge_dlq", """
        SELECT d.id::text AS id, d.message_key AS item_key, d.tenant, d.topic, d.created_at AS since,
               d.reason_code || ': ' || d.reason AS reason,
               ARRAY['group', d.consumer_group, 'message id', coalesce(d.message_id, '(none)'),
                     'attempts', d.attempts::text, 'reason code', d.reason_code]
                 || CASE WHEN h.schema IS NULL THEN ARRAY[]::text[] ELSE ARRAY['schema', h.schema] END AS details
          FROM converge_dlq d
          CROSS JOIN LATERAL (SELECT replace(substring(d.headers from '(?:^|\\n)converge-schema=([^\\n]*)'), '%2F',
                                             '/') AS schema) h
         WHERE d.status = 'PARKED'
        """));
    SOURCES.put(StuckKind.TICKET, new Source("converge_ticket", """
        SELECT t.id::text AS id, (SELECT d.message_key FROM converge_dlq d WHERE d.id = t.dlq_id) AS item_key,
               t.tenant, t.topic, t.created_at AS since, t.kind || ': ' || t.reason AS reason,
               ARRAY['group', t.consumer_group, 'message id', coalesce(t.message_id, '(none)'),
                     'dead letter', coalesce(t.dlq_id::text, '-')] AS details
          FROM converge_ticket t WHERE t.status = 'OPEN'
        """));
    // an expired key of a day partition (idempotency V5) is removed with its partition, which is dropped once every key
    // of it has expired and its day is over: it is an item from then on, not from its own expiry
    SOURCES.put(StuckKind.IDEMPOTENCY_KEY, new Source("converge_idempotency_key",
        """
            SELECT k.tenant || '/' || k.idem_key AS id, k.idem_key AS item_key, k.tenant, k.path AS topic,
                   CASE WHEN k.status = 'PROCESSING' THEN k.claimed_at ELSE coalesce(p.droppable, k.expires_at) END AS since,
                   CASE WHEN k.status = 'PROCESSING' AND k.leased_until < now()
                          THEN 'in progress, its lease ran out at ' || k.leased_until || ': a retry may take it over'
                        WHEN k.status = 'PROCESSING' THEN 'in progress'
                        WHEN p.droppable IS NULL THEN 'expired (its TTL passed), not yet purged'
                        ELSE 'expired (its TTL passed), its day partition ' || k.day || ' not yet dropped' END AS reason,
                   ARRAY['method', k.method, 'status', k.status, 'claimed', k.claimed_at::text,
                         'expires', k.expires_at::text,
                         'response', coalesce(k.response_status::text, '-')] AS details
              FROM converge_idempotency_key k
              LEFT JOIN (SELECT day, greatest(max(greatest(expires_at, leased_until)),
                                              (day + 1)::timestamp AT TIME ZONE 'UTC') AS droppable
                           FROM converge_idempotency_key WHERE day <> DATE '1970-01-01' GROUP BY day) p ON p.day = k.day
             WHERE k.status = 'PROCESSING' OR (k.expires_at < now() AND coalesce(p.droppable, k.expires_at) < now())
            """));
    SOURCES.put(StuckKind.STATE, new Source("converge_state_transition", """
        SELECT s.machine || '/' || s.entity_id AS id, s.entity_id AS item_key, s.tenant, NULL::text AS topic,
               s.at AS since,
               'in intermediate state ' || s.to_state || coalesce(' (from ' || s.from_state || ')', '')
                 || coalesce(', caused by ' || s.cause, '') AS reason,
               ARRAY['machine', s.machine, 'state', s.to_state, 'version', s.version::text,
                     'message id', coalesce(s.message_id, '')] AS details
          FROM (SELECT DISTINCT ON (machine, entity_id) * FROM converge_state_transition
                 ORDER BY machine, entity_id, id DESC) s
         WHERE NOT s.final
        """));
    // a ticket's saga is listed once, aged from its oldest open ticket; so is a saga purged before a late
    // compensation's SUCCESS opened an ANOMALY ticket for it (no saga row: listed from its tickets, resolvable only). A running or compensating saga is aged from
    // when it fell due (next_attempt_at: a reply's timeout, a backoff, its deadline), so a long but healthy saga is
    // never stuck and one no coordinator drives is; or from when it was first set aside for its current error (its
    // due time moves on every 30 s then), whichever is earlier
    SOURCES.put(StuckKind.SAGA, new Source("converge_saga",
        """
            SELECT s.id AS id, s.id AS item_key, s.tenant, NULL::text AS topic,
                   CASE WHEN s.state IN ('RUNNING', 'COMPENSATING')
                        THEN coalesce(least(s.next_attempt_at,
                                            (SELECT min(e.at) FROM converge_saga_event e
                                              WHERE e.saga_id = s.id AND e.kind = 'SET_ASIDE'
                                                AND e.seq > coalesce((SELECT max(o.seq) FROM converge_saga_event o
                                                                       WHERE o.saga_id = s.id
                                                                         AND o.kind <> 'SET_ASIDE'), 0))),
                                      s.updated_at)
                        ELSE coalesce((SELECT min(t.created_at) FROM converge_saga_ticket t
                                        WHERE t.saga_id = s.id AND t.status = 'OPEN'), s.updated_at) END AS since,
                   CASE WHEN s.state IN ('RUNNING', 'COMPENSATING')
                          THEN lower(s.state) || ' at step ' || coalesce(s.step_name, s.step::text)
                               || CASE WHEN s.awaiting THEN ', waiting for its reply' ELSE '' END
                               || coalesce(', last error: ' || s.last_error, '')
                        ELSE s.state || ', open ticket: ' || coalesce((SELECT string_agg(t.kind || ' ' || t.reason, '; '
                                                                   ORDER BY t.id) FROM converge_saga_ticket t
                                                            WHERE t.saga_id = s.id AND t.status = 'OPEN'), '') END AS reason,
                   ARRAY['definition', s.definition, 'state', s.state, 'step', coalesce(s.step_name, ''),
                         'attempt', s.attempt::text, 'next attempt', coalesce(s.next_attempt_at::text, ''),
                         'deadline', s.deadline::text,
                         'open tickets', (SELECT count(*) FROM converge_saga_ticket t
                                           WHERE t.saga_id = s.id AND t.status = 'OPEN')::text] AS details
              FROM converge_saga s
             WHERE s.state IN ('RUNNING', 'COMPENSATING')
                OR EXISTS (SELECT 1 FROM converge_saga_ticket t WHERE t.saga_id = s.id AND t.status = 'OPEN')
            UNION ALL
            SELECT t.saga_id AS id, t.saga_id AS item_key, min(t.tenant), NULL::text AS topic, min(t.created_at) AS since,
                   'purged, open ticket: ' || string_agg(t.kind || ' ' || t.reason, '; ' ORDER BY t.id) AS reason,
                   ARRAY['definition', '', 'state', 'purged', 'step', coalesce(min(t.step), ''),
                         'open tickets', count(*)::text] AS details
              FROM converge_saga_ticket t
             WHERE t.status = 'OPEN' AND NOT EXISTS (SELECT 1 FROM converge_saga s WHERE s.id = t.saga_id)
             GROUP BY t.saga_id
            """));
    SOURCES.put(StuckKind.TCC_HANGING, new Source("converge_tcc_barrier", """
        SELECT b.tenant || '/' || b.global_id || '/' || b.branch_id AS id, b.global_id AS item_key, b.tenant,
               NULL::text AS topic, b.refused_at AS since,
               'Try of branch ' || b.branch_id || ' refused ' || b.refusals || ' time(s) as hanging: its Cancel came'
                 || ' first (an empty rollback)' AS reason,
               ARRAY['global id', b.global_id, 'branch', b.branch_id, 'cancelled at', b.created_at::text,
                     'refusals', b.refusals::text] AS details
          FROM converge_tcc_barrier b
         WHERE b.refusals > 0 AND b.operation = 'try' AND b.refused_at > now() - interval '1 day'
        """));
  }

  private KindQueries() {
  }

  /** The source of {@code kind}. */
  public static Source of(StuckKind kind) {
    return SOURCES.get(kind);
  }
}
