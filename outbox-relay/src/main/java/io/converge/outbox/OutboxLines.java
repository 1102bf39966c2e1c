package io.converge.outbox;

/**
 * The outbox's "line" rule, written once for the relays, {@link Outbox} and the console: a key's line is its rows
 * of one tenant on one topic ({@code converge_outbox.order_key, tenant, topic}), delivered in {@code seq} order.
 * Only the head of a line (its oldest unpublished row) is sent; a parked head holds its own line only, and the rows
 * behind it wait. The constants are SQL fragments over {@code converge_outbox} for statements that name the row
 * they ask about {@code o}. Stateless.
 */
public final class OutboxLines {

  /**
   * A sub-query with a row when {@code o} has an unpublished row before it in its line (alias {@code p}): with
   * {@code NOT EXISTS}, {@code o} is the head of its line.
   */
  public static final String EARLIER_UNPUBLISHED = "SELECT 1 FROM converge_outbox p WHERE " + sameLine("p", "o")
      + " AND p.seq < o.seq AND p.published_at IS NULL";

  /**
   * A sub-query with a row when {@code o} waits behind a parked row of its line (alias {@code p}): with
   * {@code NOT EXISTS}, {@code o} lags only while no relay delivers it, not because its line is parked.
   */
  public static final String EARLIER_PARKED = EARLIER_UNPUBLISHED + " AND p.parked_at IS NOT NULL";

  /** A sub-query counting the unpublished rows of {@code o}'s line behind {@code o} (alias {@code w}). */
  public static final String COUNT_BEHIND = "SELECT count(*) FROM converge_outbox w WHERE " + sameLine("w", "o")
      + " AND w.seq > o.seq AND w.published_at IS NULL";

  private OutboxLines() {
  }

  /**
   * The predicate "rows {@code a} and {@code b} are in the same line", for two aliases of {@code converge_outbox}
   * (a join condition or a correlated sub-query's filter).
   *
   * @param a an alias, for example {@code r}
   * @param b another alias, for example {@code h}
   */
  public static String sameLine(String a, String b) {
    return "%1$s.order_key = %2$s.order_key AND %1$s.tenant = %2$s.tenant AND %1$s.topic = %2$s.topic".formatted(a, b);
  }
}
