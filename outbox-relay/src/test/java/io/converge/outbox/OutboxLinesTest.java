package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The line rule written once: the statements built from {@link OutboxLines} are the ones written out before. */
public class OutboxLinesTest {

  /** {@code sql} with every run of whitespace one space, and none just inside parentheses. */
  public static String normalised(String sql) {
    return sql.replaceAll("\\s+", " ").replace("( ", "(").replace(" )", ")").strip();
  }

  @Test
  void sameLineJoinsOnKeyTenantAndTopic() {
    assertThat(OutboxLines.sameLine("r", "h"))
        .isEqualTo("r.order_key = h.order_key AND r.tenant = h.tenant AND r.topic = h.topic");
  }

  @Test
  void theLagSkipsRowsBehindAParkedRowOfTheirLineAsBefore() {
    assertThat(normalised(Outbox.OLDEST_MILLIS)).isEqualTo(normalised(
        """
            SELECT (extract(epoch FROM now() - o.created_at) * 1000)::bigint FROM converge_outbox o
            WHERE o.published_at IS NULL AND o.parked_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM converge_outbox p WHERE p.order_key = o.order_key AND p.tenant = o.tenant
                              AND p.topic = o.topic AND p.seq < o.seq AND p.published_at IS NULL AND p.parked_at IS NOT NULL)
            ORDER BY o.seq LIMIT 1
            """));
  }
}
