package io.converge.producer.rocketmq;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records, in {@code converge_txn_end}, the half messages whose END did not reach the broker and the
 * check-backs the broker sent: what the console shows as units waiting for their END or check-back. Both are
 * rare (an END is dropped or fails when the broker is slow or gone; the broker checks only half messages
 * without an END), and neither is recorded on a unit's path: {@link #record} only queues (never waits, never
 * touches the database), one daemon thread writes the queue in batches, in the order recorded. The record is
 * best effort: a full queue or a failed write loses it (logged, counted nowhere else), never a message; the
 * check-back still resolves the half message. Thread-safe.
 */
final class EndRecorder implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EndRecorder.class);
  private static final int CAPACITY = 10_000;
  private static final int BATCH = 500;

  /** A half message, as the row names it. */
  record Half(String id, String topic, String key, String tenant, String attempt) {
  }

  /** One thing to record: an END that did not arrive, or a check-back's answer. */
  private record Entry(Half half, String endState, String reason, String answer, Instant since) {
  }

  // an END that did not arrive: a row that exists (a check-back came first, or an earlier failure) is kept
  private static final String NOT_DELIVERED = """
      INSERT INTO converge_txn_end (message_id, producer_group, topic, msg_key, tenant, attempt, end_state, reason,
                                    since)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (message_id) DO NOTHING
      """;
  // COMMIT or ROLLBACK resolves the row (a check-back that finds none: the END never arrived, e.g. a crash)
  private static final String RESOLVED = """
      INSERT INTO converge_txn_end (message_id, producer_group, topic, msg_key, tenant, attempt, reason, since,
                                    status, checks, last_check_at, answer, resolved_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'RESOLVED', 1, now(), ?, now())
      ON CONFLICT (message_id) DO UPDATE SET status = 'RESOLVED', checks = converge_txn_end.checks + 1,
        last_check_at = now(), answer = EXCLUDED.answer,
        resolved_at = coalesce(converge_txn_end.resolved_at, now())
      """;
  // UNKNOWN: waiting (a resolved row stays resolved: a late check-back of an ended message)
  private static final String UNDECIDED = """
      INSERT INTO converge_txn_end (message_id, producer_group, topic, msg_key, tenant, attempt, reason, since,
                                    checks, last_check_at, answer)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, now(), ?)
      ON CONFLICT (message_id) DO UPDATE SET checks = converge_txn_end.checks + 1, last_check_at = now(),
        answer = EXCLUDED.answer
        WHERE converge_txn_end.status = 'WAITING'
      """;

  private final DataSource dataSource;
  private final String group;
  private final BlockingQueue<Entry> queue = new LinkedBlockingQueue<>(CAPACITY);
  private final Thread thread;
  private volatile boolean closed;

  EndRecorder(DataSource dataSource, String group) {
    this.dataSource = dataSource;
    this.group = group;
    this.thread = new Thread(this::run, "converge-end-record-" + group);
    thread.setDaemon(true);
    thread.start();
  }

  /** END {@code state} ({@code COMMIT} or {@code ROLLBACK}) of {@code half}, due at {@code since}, did not arrive. */
  void notDelivered(Half half, String state, String reason, Instant since) {
    offer(new Entry(half, state, reason, null, since));
  }

  /**
   * A check-back asked about {@code half}, prepared at {@code prepared}, and was answered {@code answer}
   * ({@code COMMIT}, {@code ROLLBACK} or {@code UNKNOWN}, saying why in {@code reason}).
   */
  void checkedBack(Half half, String answer, String reason, Instant prepared) {
    offer(new Entry(half, null, reason, answer, prepared));
  }

  private void offer(Entry e) {
    if (closed || !queue.offer(e)) {
      LOG.debug("Not recording the END of half message {} of group {} (recorder full or closed)", e.half().id(),
          group);
    }
  }

  private void run() {
    List<Entry> batch = new ArrayList<>();
    while (!closed || !queue.isEmpty()) {
      try {
        Entry first = queue.poll(200, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        batch.add(first);
        queue.drainTo(batch, BATCH - 1);
        write(batch);
      } catch (InterruptedException e) {
        return;
      } catch (SQLException | RuntimeException e) {
        LOG.warn("Could not record {} END outcome(s) of group {} in converge_txn_end ({}); the check-back still"
            + " resolves their half messages", batch.size(), group, e.toString());
      }
      batch.clear();
    }
  }

  // one transaction, statements in the order recorded (a failure recorded after its resolution stays resolved)
  private void write(List<Entry> batch) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        for (Entry e : batch) {
          String sql = e.answer() == null ? NOT_DELIVERED : "UNKNOWN".equals(e.answer()) ? UNDECIDED : RESOLVED;
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            int p = 1;
            ps.setString(p++, e.half().id());
            ps.setString(p++, group);
            ps.setString(p++, e.half().topic());
            ps.setString(p++, e.half().key());
            ps.setString(p++, e.half().tenant());
            ps.setString(p++, e.half().attempt());
            if (e.answer() == null) {
              ps.setString(p++, e.endState());
            }
            ps.setString(p++, e.reason());
            ps.setTimestamp(p++, Timestamp.from(e.since()));
            if (e.answer() != null) {
              ps.setString(p, e.answer());
            }
            ps.executeUpdate();
          }
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
  }

  /** Writes what was recorded, waiting at most {@code grace}; later records are dropped. */
  void close(Duration grace) {
    closed = true;
    try {
      thread.join(Math.max(1, grace.toMillis()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    thread.interrupt();
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(5));
  }
}
