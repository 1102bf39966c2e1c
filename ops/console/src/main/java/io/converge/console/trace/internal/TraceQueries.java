package io.converge.console.trace.internal;

import java.util.List;

/**
 * The SQL of the timeline, one query per Converge table. Each query takes the ids to look for as its only
 * parameters (text arrays, as many as it has {@code ?}) and returns {@code at, subject, what, details} where
 * {@code details} is a text array of name/value pairs. Not for users.
 */
public final class TraceQueries {

  /**
   * One source of events.
   *
   * @param table the table it reads (a query whose table does not exist is skipped)
   * @param sql the query
   */
  public record Source(String table, String sql) {

    /** How many id-array parameters the query takes. */
    public int parameters() {
      return (int) sql.chars().filter(ch -> ch == '?').count();
    }
  }

  /** The ids related to the ids given: message ids of an entity, entities of a message, messages of a key. */
  public static final List<Source> RELATED = List.of(
      new Source("converge_state_transition", """
          SELECT message_id FROM converge_state_transition WHERE entity_id = ANY(?) AND message_id IS NOT NULL
          UNION SELECT entity_id FROM converge_state_transition WHERE message_id = ANY(?)"""),
      new Source("converge_outbox", """
          SELECT message_id FROM converge_outbox WHERE msg_key = ANY(?) OR order_key = ANY(?)"""),
      new Source("converge_dlq", """
          SELECT message_id FROM converge_dlq WHERE message_key = ANY(?) AND message_id IS NOT NULL"""),
      new Source("converge_txn_end", """
          SELECT message_id FROM converge_txn_end WHERE msg_key = ANY(?)
          UNION SELECT message_id FROM converge_txn_end
           WHERE message_id || ':' || coalesce(attempt, '') = ANY(?)"""),
      // a saga's commands and replies (their envelope ids) and, from one of them, its saga
      new Source("converge_saga_event", """
          SELECT message_id FROM converge_saga_event WHERE saga_id = ANY(?) AND message_id IS NOT NULL
          UNION SELECT saga_id FROM converge_saga_event WHERE message_id = ANY(?)"""));

  /** The events, in the order they are shown when two have the same time. */
  public static final List<Source> EVENTS = List.of(
      new Source("converge_idempotency_key", """
          SELECT claimed_at AS at, idem_key AS subject,
                 'request ' || method || ' ' || path || ' claimed' AS what,
                 ARRAY['tenant', tenant, 'status', status, 'expires', expires_at::text] AS details
            FROM converge_idempotency_key WHERE idem_key = ANY(?)
          UNION ALL
          SELECT completed_at, idem_key, 'response ' || response_status || ' stored',
                 ARRAY['body', encode(substring(response_body FROM 1 FOR 400), 'escape')]
            FROM converge_idempotency_key WHERE idem_key = ANY(?) AND completed_at IS NOT NULL"""),
      new Source("converge_state_transition", """
          SELECT at, entity_id AS subject,
                 machine || ' ' || coalesce(from_state, '(new)') || ' -> ' || to_state || ' (version ' || version || ')'
                   || CASE WHEN final THEN ', final' ELSE '' END AS what,
                 ARRAY['cause', cause, 'message', message_id, 'tenant', tenant] AS details
            FROM converge_state_transition WHERE entity_id = ANY(?) OR message_id = ANY(?)"""),
      new Source("converge_txn_log", """
          SELECT created_at AS at, message_id AS subject, 'transaction log: ' || outcome AS what,
                 ARRAY['group', producer_group, 'topic', topic] AS details
            FROM converge_txn_log WHERE message_id = ANY(?)"""),
      new Source("converge_txn_end", """
          SELECT since AS at, message_id AS subject,
                 CASE WHEN end_state IS NOT NULL THEN 'END ' || end_state || ' did not reach the broker'
                      WHEN last_check_at IS NULL THEN reason
                      ELSE 'no END reached the broker' END AS what,
                 ARRAY['group', producer_group, 'topic', topic, 'attempt', coalesce(attempt, ''),
                       'reason', reason] AS details
            FROM converge_txn_end WHERE message_id = ANY(?)
          UNION ALL
          SELECT last_check_at, message_id, 'check-back answered ' || answer
                   || CASE WHEN answer IN ('COMMIT', 'ROLLBACK') THEN ': resolved' ELSE '' END,
                 ARRAY['checks', checks::text, 'attempt', coalesce(attempt, '')]
            FROM converge_txn_end WHERE message_id = ANY(?) AND last_check_at IS NOT NULL
          UNION ALL
          SELECT resolved_at, message_id, 'END record resolved',
                 ARRAY['attempt', coalesce(attempt, ''), 'last answer', coalesce(answer, '-')]
            FROM converge_txn_end WHERE message_id = ANY(?) AND resolved_at IS NOT NULL"""),
      // a unit's Pulsar transaction while it is not confirmed (both tables of the log, pulsar migration V4's view);
      // a confirmed one leaves no row: the Pulsar backend writes no transaction-log row since V4
      new Source("converge_pulsar_logged", """
          SELECT t.created_at AS at, m.message_id AS subject,
                 'Pulsar transaction (' || t.txn_most || ',' || t.txn_least || ') open' AS what,
                 ARRAY['group', t.producer_group, 'topic', m.topic, 'deadline', t.deadline::text,
                       'attempts', t.attempts::text, 'parked', t.parked_at::text, 'reason', t.reason] AS details
            FROM converge_pulsar_logged t CROSS JOIN LATERAL unnest(t.message_ids, t.topics) AS m(message_id, topic)
           WHERE m.message_id = ANY(?)"""),
      new Source("converge_outbox", """
          SELECT created_at AS at, message_id AS subject, 'outbox row ' || seq || ' written' AS what,
                 ARRAY['topic', topic, 'key', msg_key, 'group', producer_group] AS details
            FROM converge_outbox WHERE message_id = ANY(?)
          UNION ALL
          SELECT parked_at, message_id, 'outbox row ' || seq || ' parked after ' || attempts || ' attempts',
                 ARRAY['error', last_error]
            FROM converge_outbox WHERE message_id = ANY(?) AND parked_at IS NOT NULL
          UNION ALL
          SELECT published_at, message_id, 'outbox row ' || seq || ' published', ARRAY['attempts', attempts::text]
            FROM converge_outbox WHERE message_id = ANY(?) AND published_at IS NOT NULL"""),
      new Source("converge_txn_ticket", """
          SELECT created_at AS at, message_id AS subject, 'producer ticket raised: ' || kind AS what,
                 ARRAY['group', producer_group, 'reason', reason, 'checks', checks::text] AS details
            FROM converge_txn_ticket WHERE message_id = ANY(?)
          UNION ALL
          SELECT resolved_at, message_id, 'producer ticket resolved by ' || coalesce(resolved_by, 'someone'),
                 ARRAY['note', note]
            FROM converge_txn_ticket WHERE message_id = ANY(?) AND resolved_at IS NOT NULL"""),
      new Source("converge_consumer_attempt", """
          SELECT first_failed_at AS at, message_id AS subject, 'consumer ' || consumer_group || ' failed' AS what,
                 ARRAY['tenant', tenant] AS details
            FROM converge_consumer_attempt WHERE message_id = ANY(?)
          UNION ALL
          SELECT last_failed_at, message_id, 'consumer ' || consumer_group || ' failed ' || attempts || ' times',
                 ARRAY['error', last_error]
            FROM converge_consumer_attempt WHERE message_id = ANY(?) AND attempts > 1"""),
      new Source("converge_dlq", """
          SELECT created_at AS at, coalesce(message_id, broker_message_id) AS subject,
                 'dead letter ' || id || ' (' || reason_code || ') parked by consumer ' || consumer_group AS what,
                 ARRAY['reason', reason, 'attempts', attempts::text, 'status', status, 'topic', topic] AS details
            FROM converge_dlq WHERE message_id = ANY(?) OR message_key = ANY(?)
          UNION ALL
          SELECT resolved_at, coalesce(message_id, broker_message_id), 'dead letter ' || id || ' ' || status,
                 ARRAY[]::text[]
            FROM converge_dlq WHERE (message_id = ANY(?) OR message_key = ANY(?)) AND resolved_at IS NOT NULL"""),
      new Source("converge_ticket", """
          SELECT created_at AS at, message_id AS subject, 'ticket ' || id || ' opened: ' || kind AS what,
                 ARRAY['group', consumer_group, 'reason', reason, 'dead letter', dlq_id::text] AS details
            FROM converge_ticket WHERE message_id = ANY(?)
          UNION ALL
          SELECT resolved_at, message_id, 'ticket ' || id || ' resolved by ' || coalesce(resolved_by, 'someone'),
                 ARRAY['resolution', resolution]
            FROM converge_ticket WHERE message_id = ANY(?) AND resolved_at IS NOT NULL"""),
      new Source("converge_saga_event", """
          SELECT at, saga_id AS subject,
                 'saga ' || kind || coalesce(' ' || step, '') || coalesce(' (attempt ' || attempt || ')', '') AS what,
                 ARRAY['message', message_id, 'payload', substring(payload FROM 1 FOR 400)] AS details
            FROM converge_saga_event WHERE saga_id = ANY(?)"""),
      new Source("converge_saga_branch", """
          SELECT created_at AS at, saga_id AS subject,
                 'participant ' || participant || ' ' || step || ' ' || direction || ': ' || outcome AS what,
                 ARRAY['command', command_id, 'reply', encode(substring(reply FROM 1 FOR 400), 'escape')] AS details
            FROM converge_saga_branch WHERE saga_id = ANY(?)"""),
      new Source("converge_saga_ticket", """
          SELECT created_at AS at, saga_id AS subject, 'saga ticket ' || id || ' opened: ' || kind AS what,
                 ARRAY['step', step, 'reason', reason, 'tenant', tenant] AS details
            FROM converge_saga_ticket WHERE saga_id = ANY(?)
          UNION ALL
          SELECT resolved_at, saga_id, 'saga ticket ' || id || ' resolved by ' || coalesce(resolved_by, 'someone'),
                 ARRAY['resolution', resolution]
            FROM converge_saga_ticket WHERE saga_id = ANY(?) AND resolved_at IS NOT NULL"""),
      new Source("converge_tcc_barrier", """
          SELECT created_at AS at, global_id AS subject,
                 'TCC ' || operation || ' of branch ' || branch_id || ': '
                   || CASE WHEN origin = 'cancel-first' THEN 'fenced by its Cancel (the Try never ran)'
                           ELSE outcome END AS what,
                 ARRAY['tenant', tenant, 'result', encode(substring(result FROM 1 FOR 400), 'escape')] AS details
            FROM converge_tcc_barrier WHERE global_id = ANY(?)
          UNION ALL
          SELECT refused_at, global_id, 'TCC try of branch ' || branch_id || ' refused as hanging ('
                   || refusals || ' time(s))',
                 ARRAY['tenant', tenant]
            FROM converge_tcc_barrier WHERE global_id = ANY(?) AND refusals > 0"""),
      new Source("converge_dedup", """
          SELECT processed_at AS at, message_id AS subject,
                 'consumer ' || consumer_group || ': ' || outcome AS what,
                 ARRAY['topic', topic, 'tenant', tenant, 'detail', detail] AS details
            FROM converge_dedup WHERE message_id = ANY(?)"""));

  private TraceQueries() {
  }
}
