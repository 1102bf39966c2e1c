package io.converge.console.inspect.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.console.inspect.StuckKind;
import org.junit.jupiter.api.Test;

/** The console's outbox queries built from {@code OutboxLines} are the ones written out before. */
class KindQueriesTest {

  private static String normalised(String sql) {
    return sql.replaceAll("\\s+", " ").replace("( ", "(").replace(" )", ")").strip();
  }

  @Test
  void aLaggingRowIsNotBehindAParkedRowOfItsLine() {
    assertThat(normalised(KindQueries.of(StuckKind.OUTBOX_LAG).sql())).isEqualTo(normalised("""
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
           AND NOT EXISTS (SELECT 1 FROM converge_outbox p WHERE p.order_key = o.order_key AND p.tenant = o.tenant
                            AND p.topic = o.topic AND p.seq < o.seq AND p.published_at IS NULL
                            AND p.parked_at IS NOT NULL)
        """));
  }

  @Test
  void aParkedRowCountsTheRowsOfItsLineBehindIt() {
    assertThat(normalised(KindQueries.of(StuckKind.OUTBOX_PARKED).sql())).isEqualTo(normalised("""
        SELECT o.message_id AS id, o.order_key AS item_key,
               o.tenant, o.topic,
               coalesce(o.parked_at, o.created_at) AS since,
               'parked after ' || o.attempts || ' attempt(s): ' || coalesce(o.last_error, '') AS reason,
               ARRAY['group', o.producer_group, 'seq', o.seq::text, 'attempts', o.attempts::text,
                     'rows waiting behind it', (SELECT count(*) FROM converge_outbox w WHERE w.order_key = o.order_key
                                                 AND w.tenant = o.tenant AND w.topic = o.topic
                                                 AND w.seq > o.seq AND w.published_at IS NULL)::text,
                     'written', o.created_at::text] AS details
          FROM converge_outbox o WHERE o.published_at IS NULL AND o.parked_at IS NOT NULL
        """));
  }
}
