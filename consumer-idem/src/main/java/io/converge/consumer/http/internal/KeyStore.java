package io.converge.consumer.http.internal;

import io.converge.consumer.http.IdempotencyException;
import io.converge.consumer.http.IdempotencyProblem;
import io.converge.consumer.internal.HeaderCodec;
import io.converge.core.internal.Backoff;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * {@code converge_idempotency_key} over JDBC. Every statement is its own short auto-committed
 * transaction: the claim is visible to every instance before the handler starts, and no transaction
 * spans the handler. Thread-safe.
 */
final class KeyStore {

  /** What a claim attempt found. */
  sealed interface Decision {
  }

  /** The key is ours (new, expired, or taken over from a dead owner): run the handler. */
  record Claimed(UUID owner, boolean takenOver) implements Decision {
  }

  /** The first request completed: replay its response. */
  record Replay(StoredResponse response) implements Decision {
  }

  /** The first request is still running: 409, retry after {@code retryAfter}. */
  record Busy(Duration retryAfter) implements Decision {
  }

  /**
   * The key's claim was left in progress by a request whose work committed (its marker is set) but whose answer was
   * never stored: {@code response} (409 answer-lost) is now stored as the key's answer; the handler must not run.
   */
  record AnswerLost(StoredResponse response) implements Decision {
  }

  /** The key was first used with another fingerprint: 422. */
  record Mismatch() implements Decision {
  }

  /** A request being claimed. */
  record Request(String tenant, String key, String fingerprint, String method, String path, Duration expected) {
  }

  /**
   * Inserts the key's row unless a partition holds the key (idempotency V5, consumer-idem README "Idempotency-Key
   * partitions by day"): the claims of one key serialize on an advisory lock and look the key up in every partition
   * before inserting, which the partitioned table's per-partition primary keys alone do not do. Every time is the
   * database's ({@code now()}: one clock for every instance, whatever their own clocks say); the row goes to the
   * partition of the database's day.
   */
  private static final String CLAIM = "SELECT converge_idempotency_claim(?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)";
  /** What {@link #CLAIM} raises in a transaction that is not READ COMMITTED (its lookup would miss a new claim). */
  private static final String NOT_READ_COMMITTED = "CVI01";
  private static final String READ = """
      SELECT fingerprint, status, lease_owner, expected_ms, response_status, response_headers, response_body,
             expires_at <= now() AS expired, leased_until <= now() AS lease_over,
             (extract(epoch FROM now() - claimed_at) * 1000)::bigint AS elapsed_ms,
             work_committed_at IS NOT NULL AS work_committed
        FROM converge_idempotency_key WHERE tenant = ? AND idem_key = ?
      """;
  // a compare-and-swap on the previous owner, re-checking in SQL that the row is still takeable; in place: the row stays
  // in the partition of the day the key was first claimed (no statement changes `day`, no row moves between partitions)
  private static final String TAKE_OVER = """
      UPDATE converge_idempotency_key
         SET fingerprint = ?, method = ?, path = ?, status = 'PROCESSING', lease_owner = ?,
             leased_until = now() + ? * interval '1 millisecond', expected_ms = ?, claimed_at = now(),
             expires_at = now() + ? * interval '1 millisecond', completed_at = NULL, response_status = NULL,
             response_headers = NULL, response_body = NULL, work_committed_at = NULL
       WHERE tenant = ? AND idem_key = ? AND lease_owner = ?
         AND (expires_at <= now() OR (status = 'PROCESSING' AND leased_until <= now() AND work_committed_at IS NULL))
      """;
  // a claim whose work committed but whose answer was lost gets the answer-lost problem as its answer, for good
  private static final String ANSWER_LOST = """
      UPDATE converge_idempotency_key
         SET status = 'COMPLETED', completed_at = now(), response_status = ?, response_headers = ?, response_body = ?
       WHERE tenant = ? AND idem_key = ? AND lease_owner = ? AND status = 'PROCESSING' AND leased_until <= now()
         AND expires_at > now() AND work_committed_at IS NOT NULL
      """;
  // run on the handler's own transaction just before its COMMIT: commits if and only if the handler's work commits
  private static final String MARK = """
      UPDATE converge_idempotency_key SET work_committed_at = now()
       WHERE tenant = ? AND idem_key = ? AND lease_owner = ? AND status = 'PROCESSING'
      """;
  private static final String COMPLETE = """
      UPDATE converge_idempotency_key
         SET status = 'COMPLETED', completed_at = now(), response_status = ?, response_headers = ?, response_body = ?
       WHERE tenant = ? AND idem_key = ? AND lease_owner = ? AND status IN ('PROCESSING', 'COMPLETED')
      """;
  // a claim given back: its handler's work was rolled back, so the key is free again; never a claim whose marker
  // committed (work the filter did not see commit), and a marker still being committed is waited for (row lock)
  private static final String RELEASE = """
      DELETE FROM converge_idempotency_key
       WHERE tenant = ? AND idem_key = ? AND lease_owner = ? AND status = 'PROCESSING' AND work_committed_at IS NULL
      """;
  private static final int MAX_ROUNDS = 5;
  /** Pauses between attempts to store an answer ({@link #complete(String, String, UUID, StoredResponse, Duration)}): 100 ms doubling up to 2 s. */
  static final Backoff COMPLETE_RETRY = Backoff.withJitter(Duration.ofMillis(100), Duration.ofSeconds(2), 2.0, 0.0,
      null);

  private final DataSource dataSource;
  private final Duration ttl;
  private final Duration lease;

  KeyStore(DataSource dataSource, Duration ttl, Duration lease) {
    this.dataSource = dataSource;
    this.ttl = ttl;
    this.lease = lease;
  }

  /**
   * Claims {@code r}'s key or reports who holds it. Expiry and leases are read with the database's clock.
   *
   * @throws IdempotencyException {@link IdempotencyProblem#STORE_UNAVAILABLE} when the database fails
   */
  Decision claim(Request r) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      try {
        return claim(c, r);
      } catch (SQLException e) {
        if (!NOT_READ_COMMITTED.equals(e.getSQLState())) {
          throw e;
        }
        // the connection's default isolation is stricter (a pool or database setting): the claim needs READ
        // COMMITTED (its lookup must see what committed while it waited for the key's lock), this connection is ours
        int isolation = c.getTransactionIsolation();
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        try {
          return claim(c, r);
        } finally {
          c.setTransactionIsolation(isolation);
        }
      }
    } catch (SQLException e) {
      throw new IdempotencyException(IdempotencyProblem.STORE_UNAVAILABLE, "Could not claim Idempotency-Key '" + r.key()
          + "' of tenant '" + r.tenant() + "': " + e.getMessage(), r.tenant(), r.key(), e);
    }
  }

  private Decision claim(Connection c, Request r) throws SQLException {
    UUID owner = UUID.randomUUID();
    for (int round = 0; round < MAX_ROUNDS; round++) {
      if (insert(c, r, owner)) {
        return new Claimed(owner, false);
      }
      try (PreparedStatement ps = c.prepareStatement(READ)) {
        ps.setString(1, r.tenant());
        ps.setString(2, r.key());
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            continue; // purged between the insert and the read: claim again
          }
          boolean expired = rs.getBoolean("expired");
          boolean processing = "PROCESSING".equals(rs.getString("status"));
          boolean leaseOver = rs.getBoolean("lease_over");
          UUID previous = (UUID) rs.getObject("lease_owner");
          if (!expired && !rs.getString("fingerprint").equals(r.fingerprint())) {
            return new Mismatch();
          }
          if (!expired && !processing) {
            return new Replay(new StoredResponse(rs.getInt("response_status"),
                HeaderCodec.decode(rs.getString("response_headers")), rs.getBytes("response_body")));
          }
          if (!expired && !leaseOver) {
            return new Busy(Duration.ofMillis(rs.getLong("expected_ms") - rs.getLong("elapsed_ms")));
          }
          if (processing && !expired && rs.getBoolean("work_committed")) {
            // the work committed, its answer was lost: running the handler again would do it twice
            StoredResponse lost = answerLost();
            if (storeAnswerLost(c, r, previous, lost)) {
              return new AnswerLost(lost);
            }
            continue; // changed under us: read again
          }
          if (takeOver(c, r, owner, previous)) {
            return new Claimed(owner, processing && !expired);
          }
        }
      }
    }
    return new Busy(Duration.ZERO); // the key changed hands under us every round: let the client come back
  }

  /** The answer of a claim whose work committed and whose answer was lost: 409 answer-lost. */
  static StoredResponse answerLost() {
    return Problems.stored(IdempotencyProblem.ANSWER_LOST);
  }

  private static boolean storeAnswerLost(Connection c, Request r, UUID previous, StoredResponse lost)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ANSWER_LOST)) {
      ps.setInt(1, lost.status());
      ps.setString(2, HeaderCodec.encode(lost.headers()));
      ps.setBytes(3, lost.body());
      ps.setString(4, r.tenant());
      ps.setString(5, r.key());
      ps.setObject(6, previous);
      return ps.executeUpdate() == 1;
    }
  }

  /**
   * Marks the claim of {@code owner} as "work committed" on {@code transaction}, the handler's own transaction's
   * connection, just before its commit: the mark commits if and only if the handler's work does.
   *
   * @return false when the claim is no longer {@code owner}'s (taken over, or purged)
   */
  static boolean markWorkCommitted(Connection transaction, String tenant, String key, UUID owner)
      throws SQLException {
    try (PreparedStatement ps = transaction.prepareStatement(MARK)) {
      ps.setString(1, tenant);
      ps.setString(2, key);
      ps.setObject(3, owner);
      return ps.executeUpdate() == 1;
    }
  }

  private boolean insert(Connection c, Request r, UUID owner) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CLAIM)) {
      bindClaim(ps, r, owner);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  private boolean takeOver(Connection c, Request r, UUID owner, UUID previous) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(TAKE_OVER)) {
      bindClaim(ps, r, owner);
      ps.setObject(10, previous);
      return ps.executeUpdate() == 1;
    }
  }

  /** Parameters 1-9, in the same order in {@link #CLAIM} and {@link #TAKE_OVER}. */
  private void bindClaim(PreparedStatement ps, Request r, UUID owner) throws SQLException {
    ps.setString(1, r.fingerprint());
    // method and path are for people reading the table (the fingerprint covers them in full): cut to the columns
    ps.setString(2, cut(r.method(), 16));
    ps.setString(3, cut(r.path(), 2048));
    ps.setObject(4, owner);
    ps.setLong(5, lease.toMillis());
    ps.setLong(6, r.expected().toMillis());
    ps.setLong(7, ttl.toMillis());
    ps.setString(8, r.tenant());
    ps.setString(9, r.key());
  }

  private static String cut(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max);
  }

  /**
   * Stores {@code response} for the claim of {@code owner}.
   *
   * @return false when the claim is no longer {@code owner}'s (its lease expired and it was taken over)
   * @throws IdempotencyException {@link IdempotencyProblem#STORE_UNAVAILABLE} when the database fails
   */
  boolean complete(String tenant, String key, UUID owner, StoredResponse response) {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(COMPLETE)) {
      c.setAutoCommit(true);
      ps.setInt(1, response.status());
      ps.setString(2, HeaderCodec.encode(response.headers()));
      ps.setBytes(3, response.body());
      ps.setString(4, tenant);
      ps.setString(5, key);
      ps.setObject(6, owner);
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw new IdempotencyException(IdempotencyProblem.STORE_UNAVAILABLE,
          "Could not store the response of Idempotency-Key '"
              + key + "' of tenant '" + tenant + "': " + e.getMessage(),
          tenant, key, e);
    }
  }

  /**
   * {@link #complete}, tried again while the database fails, for at most {@code budget}: a committed answer released
   * to the client but not stored would answer its retry {@code 409 answer-lost} (a PostgreSQL restart of a second at
   * the wrong moment). Storing again is idempotent for the same owner (the statement matches its completed row too).
   *
   * @throws IdempotencyException the last failure, when the budget is spent
   */
  boolean complete(String tenant, String key, UUID owner, StoredResponse response, Duration budget)
      throws InterruptedException {
    long deadline = System.nanoTime() + budget.toNanos();
    for (int failures = 1;; failures++) {
      try {
        return complete(tenant, key, owner, response);
      } catch (IdempotencyException e) {
        long pause = COMPLETE_RETRY.ceiling(failures).toMillis();
        if (System.nanoTime() + pause * 1_000_000 > deadline) {
          throw e;
        }
        Thread.sleep(pause);
      }
    }
  }

  /**
   * Deletes {@code owner}'s claim, so that a retry with the key runs the handler, unless its work-committed marker is
   * set: work that committed is never released for a second run.
   *
   * @return false when the claim is no longer {@code owner}'s, or its marker is set (the claim is kept)
   * @throws SQLException when the database fails (the claim then waits for its lease to end)
   */
  boolean release(String tenant, String key, UUID owner) throws SQLException {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(RELEASE)) {
      c.setAutoCommit(true);
      ps.setString(1, tenant);
      ps.setString(2, key);
      ps.setObject(3, owner);
      return ps.executeUpdate() == 1;
    }
  }
}
