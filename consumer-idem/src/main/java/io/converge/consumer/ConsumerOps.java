package io.converge.consumer;

import io.converge.core.internal.OpsRows;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * What ops sees of the consumers: parked messages ({@code converge_dlq}) and manual tickets
 * ({@code converge_ticket}), with age and reason. Resuming a parked message is
 * {@link IdempotentHandler#resume(long)}. Thread-safe; each call is one short transaction.
 */
public final class ConsumerOps {

  /** A parked message. {@code messageId} is null when the message had none. */
  public record DeadLetter(long id, String tenant, String group, String topic, String messageId, String reasonCode,
      String reason, int attempts, Instant createdAt, Duration age) {
  }

  /** A manual ticket. */
  public record Ticket(long id, String tenant, String group, String topic, String messageId, Long dlqId, String kind,
      String reason, String status, Instant createdAt, Duration age) {
  }

  private static final String PARKED = """
      SELECT id, tenant, consumer_group, topic, message_id, reason_code, reason, attempts, created_at
        FROM converge_dlq WHERE status = 'PARKED' ORDER BY created_at, id LIMIT ?
      """;
  private static final String COUNT_PARKED = "SELECT count(*) FROM converge_dlq WHERE status = 'PARKED'";
  private static final String DISCARD = """
      UPDATE converge_dlq SET status = 'DISCARDED', resolved_at = ? WHERE id = ? AND status = 'PARKED'
      """;
  // the reason keeps what it was, once: a row whose re-drive failed ("marked for re-drive (was CODE: reason);
  // re-drive failed: error") gets its first mark back, not a mark of the mark; a held row follows its head, a
  // marked one is already waiting, an invalid envelope would be refused again (EnvelopeCheck), and a message that
  // failed its signature check must never reach a handler (a forged one would run)
  private static final String REDRIVE = """
      UPDATE converge_dlq SET reason_code = 'REDRIVE', reason = CASE
               WHEN reason_code = 'REDRIVE_FAILED' AND strpos(reason, '; re-drive failed: ') > 0
                 THEN left(reason, strpos(reason, '; re-drive failed: ') - 1)
               ELSE 'marked for re-drive (was ' || reason_code || coalesce(': ' || reason, '') || ')' END
       WHERE id = ? AND status = 'PARKED' AND reason_code NOT IN ('HELD', 'REDRIVE', 'INVALID_ENVELOPE',
                                                                      'SIGNATURE_INVALID')
      """;
  private static final String OPEN_TICKETS = """
      SELECT id, tenant, consumer_group, topic, message_id, dlq_id, kind, reason, status, created_at
        FROM converge_ticket WHERE status = 'OPEN' ORDER BY created_at, id LIMIT ?
      """;
  private static final String RESOLVE_TICKET = """
      UPDATE converge_ticket SET status = 'RESOLVED', resolved_at = ?, resolved_by = ?, resolution = ?
       WHERE id = ? AND status = 'OPEN'
      """;

  private final OpsRows rows;
  private final Clock clock;

  private ConsumerOps(DataSource dataSource, Clock clock) {
    this.rows = OpsRows.on(dataSource);
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** Ops on {@code dataSource}, ages measured with {@code clock}. */
  public static ConsumerOps of(DataSource dataSource, Clock clock) {
    return new ConsumerOps(dataSource, clock);
  }

  /** Ops on {@code dataSource} with the UTC system clock. */
  public static ConsumerOps of(DataSource dataSource) {
    return of(dataSource, Clock.systemUTC());
  }

  /** Parked messages, oldest first, at most {@code limit}. */
  public List<DeadLetter> parked(int limit) {
    return query(PARKED, limit, rs -> {
      Instant created = rs.getTimestamp("created_at").toInstant();
      return new DeadLetter(rs.getLong("id"), rs.getString("tenant"), rs.getString("consumer_group"),
          rs.getString("topic"),
          rs.getString("message_id"), rs.getString("reason_code"), rs.getString("reason"), rs.getInt("attempts"),
          created,
          Duration.between(created, clock.instant()));
    });
  }

  /** The number of parked messages (the {@code dlq.size} gauge). */
  public long countParked() {
    return rows.count("converge_dlq", COUNT_PARKED);
  }

  /** Marks parked message {@code dlqId} discarded by a person. @return false when it was not parked */
  public boolean discard(long dlqId) {
    return update(DISCARD, ps -> {
      ps.setTimestamp(1, Timestamp.from(clock.instant()));
      ps.setLong(2, dlqId);
    });
  }

  /**
   * Marks parked message {@code dlqId} for re-drive (a person fixed the cause): the running consumer of its
   * group runs it again through its handler within its release interval (default 5 s), as
   * {@link IdempotentHandler#resume(long)} does, then the messages held behind it. A re-drive whose technical
   * failure persists through the policy's attempts, or that fails for good, leaves the row parked with reason
   * code {@code REDRIVE_FAILED} (its reason: the mark, then the failure); it can be marked again.
   *
   * @return false when it was not parked, is held behind another parked message, is already marked, or was parked
   *     with reason code {@code INVALID_ENVELOPE} (publish its payload again with a valid envelope, then discard it)
   *     or {@code SIGNATURE_INVALID} (never run: discard it; a genuine message is published again by its producer).
   *     A row parked {@code SCHEMA_UNSUPPORTED} runs once the consumer reads its schema (else its re-drive fails and
   *     it stays parked); one parked {@code REPLAYED} runs without its age checked again
   */
  public boolean redrive(long dlqId) {
    return update(REDRIVE, ps -> ps.setLong(1, dlqId));
  }

  /** Open tickets, oldest first, at most {@code limit}. */
  public List<Ticket> openTickets(int limit) {
    return query(OPEN_TICKETS, limit, rs -> {
      Instant created = rs.getTimestamp("created_at").toInstant();
      long dlq = rs.getLong("dlq_id");
      return new Ticket(rs.getLong("id"), rs.getString("tenant"), rs.getString("consumer_group"), rs.getString("topic"),
          rs.getString("message_id"), rs.wasNull() ? null : dlq, rs.getString("kind"), rs.getString("reason"),
          rs.getString("status"), created, Duration.between(created, clock.instant()));
    });
  }

  /** Closes ticket {@code ticketId}. @return false when it was not open */
  public boolean resolveTicket(long ticketId, String resolvedBy, String resolution) {
    Objects.requireNonNull(resolvedBy, "resolvedBy");
    return update(RESOLVE_TICKET, ps -> {
      ps.setTimestamp(1, Timestamp.from(clock.instant()));
      ps.setString(2, resolvedBy);
      ps.setString(3, resolution);
      ps.setLong(4, ticketId);
    });
  }

  private <T> List<T> query(String sql, int limit, OpsRows.Row<T> row) {
    return rows.list("the consumer ops tables", sql, limit, 10_000, row);
  }

  private boolean update(String sql, OpsRows.Binder binder) {
    return rows.updateOne("Could not update the consumer ops tables", null, sql, binder);
  }
}
