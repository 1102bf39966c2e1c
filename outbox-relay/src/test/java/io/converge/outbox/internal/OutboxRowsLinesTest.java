package io.converge.outbox.internal;

import static io.converge.outbox.OutboxLinesTest.normalised;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The relay's statements built from {@code OutboxLines} are the ones written out before. */
class OutboxRowsLinesTest {

  @Test
  void aHeadHasNoUnpublishedRowBeforeItInItsLine() {
    assertThat(normalised(OutboxRows.EARLIER_IN_LINE)).isEqualTo(normalised("""
        SELECT 1 FROM converge_outbox p
        WHERE p.order_key = o.order_key AND p.tenant = o.tenant AND p.topic = o.topic AND p.seq < o.seq
          AND p.published_at IS NULL"""));
  }

  @Test
  void theRowsOfALineJoinOnItsKeyTenantAndTopic() {
    assertThat(normalised(OutboxRows.ROWS_OF_LINES)).isEqualTo(normalised("""
        SELECT r.seq, r.message_id, r.topic, r.order_key, r.msg_key, r.tag, r.header_names, r.header_values, r.payload,
               r.attempts
        FROM converge_outbox h
        JOIN converge_outbox r ON r.order_key = h.order_key AND r.tenant = h.tenant AND r.topic = h.topic
                              AND r.seq >= h.seq AND r.published_at IS NULL AND r.parked_at IS NULL
        WHERE h.seq = ANY (?)
        ORDER BY r.seq
        LIMIT ?
        """));
  }
}
