package io.converge.producer.rocketmq;

import io.converge.producer.spi.ProducerMetrics;
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
 * Records, in {@code converge_txn_end}, the half messages whose END did not reach the broker, the check-backs the
 * broker sent, and the ENDs that resolved a unit a check-back had found open: what the console shows as units
 * waiting for their END or check-back. All are rare (an END is dropped or fails when the broker is slow or gone;
 * the broker checks only half messages without an END, older than its transaction timeout), and none is recorded
 * on a unit's path: the methods only queue (never wait, never touch the database), one daemon thread writes the
 * queue in batches, in the order recorded.
 *
 * <p>A row is one attempt of a half message (migration V6): a unit retried with the same message id has a row
 * per attempt. It is resolved by a check-back answered COMMIT or ROLLBACK, or by an END that succeeds after a
 * check-back answered UNKNOWN (its unit was still open): {@link #ended} resolves the row of every half message
 * ended successfully when it was older than {@link #CHECKABLE} (the broker checks no younger one, so a younger
 * one has no row to resolve), whichever instance of the group answered the check-back, and writes it resolved when
 * there is none yet: an UNKNOWN answer written after the END (another instance's batch, a late check-back) leaves
 * a resolved row alone. An END that failed is not
 * sent again: the broker (5.4.0, {@code EndTransactionProcessor}) looks the half message up by its commit-log
 * offset without asking whether it was already ended, so a second END COMMIT writes the real message a second
 * time. If the failed END had not reached the broker, the check-back resolves the row; if it had (an answer lost
 * after the broker applied it), no check-back comes: {@link FailedEnds} finds that out and calls {@link #resolved}.
 *
 * <p>The record is best effort: a full queue or a closed recorder loses a record, and a failed batch is written
 * again entry by entry, so that a bad entry loses only itself; each lost record is counted
 * ({@code txn.end-records.lost}), a failed write logged as a warning (a full queue at debug). Never a message: the
 * check-back still resolves the half message. Thread-safe.
 */
final class EndRecorder implements AutoCloseable {

  /** How old a half message must be for the broker to check it back (RocketMQ's transaction timeout, at least). */
  static final Duration CHECKABLE = Duration.ofSeconds(1);
  private static final Logger LOG = LoggerFactory.getLogger(EndRecorder.class);
  private static final int CAPACITY = 10_000;
  private static final int BATCH = 500;

  /** A half message, as the row names it. */
  record Half(String id, String topic, String key, String tenant, String attempt) {
  }

  /** One thing to record: an END that did not arrive, a check-back's answer, or an END that arrived late. */
  private record Entry(Half half, String endState, String reason, String answer, Instant since, boolean ended) {
  }

  // an END that did not arrive: a row that exists (a check-back came first, or an earlier failure) is kept
  private static final String NOT_DELIVERED = """
      INSERT INTO converge_txn_end (message_id, producer_group, topic, msg_key, tenant, attempt, end_state, reason,
                                    since)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (message_id, (coalesce(attempt, ''))) DO NOTHING
      """;
  // COMMIT or ROLLBACK resolves the row (a check-back that finds none: the END never arrived, e.g. a crash)
  private static final String RESOLVED = """
      INSERT INTO converge_txn_end (message_id, producer_group, topic, msg_key, tenant, attempt, reason, since,
                                    status, checks, last_check_at, answer, resolved_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'RESOLVED', 1, now(), ?, now())
      ON CONFLICT (message_id, (coalesce(attempt, ''))) DO UPDATE SET status = 'RESOLVED',
        checks = converge_txn_end.checks + 1, last_check_at = now(), answer = EXCLUDED.answer,
        resolved_at = coalesce(converge_txn_end.resolved_at, now())
      """;
  // UNKNOWN: waiting (a resolved row stays resolved: a late check-back of an ended message)
  private static final String UNDECIDED = """
      INSERT INTO converge_txn_end (message_id, producer_group, topic, msg_key, tenant, attempt, reason, since,
                                    checks, last_check_at, answer)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, now(), ?)
      ON CONFLICT (message_id, (coalesce(attempt, ''))) DO UPDATE SET checks = converge_txn_end.checks + 1,
        last_check_at = now(), answer = EXCLUDED.answer
        WHERE converge_txn_end.status = 'WAITING'
      """;
  // an END the broker took: the row of this attempt is resolved, inserted RESOLVED when none is there yet, so that a
  // check-back answered UNKNOWN and written after it (another instance's batch, a late check-back) cannot leave
  // it waiting: UNDECIDED leaves a resolved row alone
  private static final String ENDED = """
      INSERT INTO converge_txn_end (message_id, producer_group, topic, msg_key, tenant, attempt, reason, since,
                                    status, resolved_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'RESOLVED', now())
      ON CONFLICT (message_id, (coalesce(attempt, ''))) DO UPDATE SET status = 'RESOLVED',
        resolved_at = coalesce(converge_txn_end.resolved_at, now())
      """;

  private final DataSource dataSource;
  private final String group;
  private final ProducerMetrics metrics;
  private final BlockingQueue<Entry> queue = new LinkedBlockingQueue<>(CAPACITY);
  private final Thread thread;
  private volatile boolean closed;

  EndRecorder(DataSource dataSource, String group, ProducerMetrics metrics) {
    this.dataSource = dataSource;
    this.group = group;
    this.metrics = metrics;
    this.thread = new Thread(this::run, "converge-end-record-" + group);
    thread.setDaemon(true);
    thread.start();
  }

  /** END {@code state} ({@code COMMIT} or {@code ROLLBACK}) of {@code half}, due at {@code since}, did not arrive. */
  void notDelivered(Half half, String state, String reason, Instant since) {
    offer(new Entry(half, state, reason, null, since, false));
  }

  /**
   * A check-back asked about {@code half}, prepared at {@code prepared}, and was answered {@code answer}
   * ({@code COMMIT}, {@code ROLLBACK} or {@code UNKNOWN}, saying why in {@code reason}).
   */
  void checkedBack(Half half, String answer, String reason, Instant prepared) {
    offer(new Entry(half, null, reason, answer, prepared, false));
  }

  /**
   * The broker took END {@code state} of {@code half}, which it had held for {@code age} (from the start of its
   * send): when it is old enough to have been checked back ({@link #CHECKABLE}), its row is resolved, or written
   * resolved if there is none yet (a check-back answered UNKNOWN may still be written after it); a younger one
   * queues nothing.
   */
  void ended(Half half, String state, Duration age) {
    if (age.compareTo(CHECKABLE) >= 0) {
      offer(new Entry(half, state, "END " + state + " reached the broker", null, Instant.now().minus(age), true));
    }
  }

  /** END {@code state} of {@code half} reached the broker after all (its answer lost): resolves its row. */
  void resolved(Half half, String state) {
    offer(new Entry(half, state, "END " + state + " reached the broker (its answer was lost)", null, Instant.now(),
        true));
  }

  // counted, logged at debug: a full queue (a database slower than the broker's failures) would flood the log
  private void offer(Entry e) {
    if (closed || !queue.offer(e)) {
      metrics.endRecordLost();
      LOG.debug("Not recording the END of half message {} of group {} (recorder full or closed)", e.half().id(),
          group);
    }
  }

  private void lost(Entry e, Object why) {
    metrics.endRecordLost();
    LOG.warn("Lost the END record of half message {} of group {} for converge_txn_end ({}); the check-back still"
        + " resolves it", e.half().id(), group, why);
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
        writeOrSplit(batch);
      } catch (InterruptedException e) {
        return;
      }
      batch.clear();
    }
  }

  // the batch in one transaction; when it fails, each entry in its own (in order), so a bad one loses only itself
  private void writeOrSplit(List<Entry> batch) {
    try {
      write(batch);
      return;
    } catch (SQLException | RuntimeException e) {
      if (batch.size() == 1) {
        lost(batch.get(0), e);
        return;
      }
      LOG.debug("Writing {} END records of group {} failed ({}); writing them one by one", batch.size(), group,
          e.toString());
    }
    for (Entry one : batch) {
      try {
        write(List.of(one));
      } catch (SQLException | RuntimeException e) {
        lost(one, e);
      }
    }
  }

  // one transaction, statements in the order recorded (a failure recorded after its resolution stays resolved)
  private void write(List<Entry> batch) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        for (Entry e : batch) {
          try (PreparedStatement ps = c.prepareStatement(sql(e))) {
            bind(ps, e);
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

  private static String sql(Entry e) {
    if (e.ended()) {
      return ENDED;
    }
    return e.answer() == null ? NOT_DELIVERED : "UNKNOWN".equals(e.answer()) ? UNDECIDED : RESOLVED;
  }

  private void bind(PreparedStatement ps, Entry e) throws SQLException {
    int p = 1;
    ps.setString(p++, e.half().id());
    ps.setString(p++, group);
    ps.setString(p++, e.half().topic());
    ps.setString(p++, e.half().key());
    ps.setString(p++, e.half().tenant());
    ps.setString(p++, e.half().attempt());
    if (e.answer() == null && !e.ended()) {
      ps.setString(p++, e.endState());
    }
    ps.setString(p++, e.reason());
    ps.setTimestamp(p++, Timestamp.from(e.since()));
    if (e.answer() != null) {
      ps.setString(p, e.answer());
    }
  }

  /** Writes what was recorded, waiting at most {@code grace}; later records are dropped. */
  void close(Duration grace) {
    closed = true;
    Writers.stop(List.of(thread), grace);
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(5));
  }
}
