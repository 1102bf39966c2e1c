package io.converge.consumer.http.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renews the leases of the running handlers of one filter, every third of the lease, all in one
 * {@code UPDATE} with the database's clock ({@code leased_until = now() + lease}) that skips the rows a transaction
 * holds locked (they are renewed at a later round). It holds one connection
 * of its own for the filter's life, taken before the first claim: renewals never queue behind the application's
 * requests for a pooled connection, so a saturated pool cannot let a live handler's lease expire (issue
 * 13.8). A broken connection is replaced by a dedicated opener thread: no renewal and no lock waits for a connection
 * being opened, so renewals resume as soon as one connection is obtained. Thread-safe.
 */
final class LeaseKeeper implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

  /**
   * Matches the owner whatever the status: a claim completed while a renewal runs is found (a completed key's lease is
   * never read), so only a real takeover (another owner) drops a claim. Rows locked by another transaction are skipped,
   * never waited for: the handler's own transaction holds its claim's row from the marker's {@code UPDATE} (a NESTED
   * savepoint's release writes it early) to its {@code COMMIT}, and one such row must not hold back every lease of the
   * instance (issue 31.9). A locked row cannot be taken over meanwhile either: the takeover waits for the same lock.
   */
  private static final String RENEW = """
      UPDATE converge_idempotency_key k SET leased_until = now() + ? * interval '1 millisecond'
       WHERE (k.tenant, k.idem_key) IN (
             SELECT f.tenant, f.idem_key
               FROM converge_idempotency_key f
               JOIN unnest(?::varchar[], ?::varchar[], ?::uuid[]) AS l(tenant, idem_key, lease_owner)
                 ON f.tenant = l.tenant AND f.idem_key = l.idem_key AND f.lease_owner = l.lease_owner
                FOR UPDATE OF f SKIP LOCKED)
      RETURNING k.lease_owner
      """;
  /** Which of the claims not renewed are still ours (their row was locked), read without waiting for any lock. */
  private static final String OWNED = """
      SELECT k.lease_owner
        FROM converge_idempotency_key k
        JOIN unnest(?::varchar[], ?::varchar[], ?::uuid[]) AS l(tenant, idem_key, lease_owner)
          ON k.tenant = l.tenant AND k.idem_key = l.idem_key AND k.lease_owner = l.lease_owner
      """;

  /** A running handler's claim. */
  record Claim(String tenant, String key, UUID owner) {
  }

  private final DataSource dataSource;
  private final Duration lease;
  private final Map<UUID, Claim> live = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timer;
  /** Opens replacement connections, so that neither renewals nor their monitor wait for one. */
  private final java.util.concurrent.ExecutorService opener;
  private final java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();
  private final java.util.concurrent.atomic.AtomicBoolean reserving = new java.util.concurrent.atomic.AtomicBoolean();
  /** Written under {@code this}. */
  private volatile Connection connection;

  LeaseKeeper(DataSource dataSource, Duration lease) {
    this.dataSource = dataSource;
    this.lease = lease;
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "converge-idempotency-lease");
      t.setDaemon(true);
      return t;
    });
    this.opener = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "converge-idempotency-lease-open");
      t.setDaemon(true);
      return t;
    });
  }

  /** Keeps {@code claim}'s lease until {@link #stop}; reserves the keeper's connection if it has none yet. */
  void keep(Claim claim) {
    live.put(claim.owner(), claim);
    if (started.compareAndSet(false, true)) {
      // the thread starts with the first claim: a filter that never claims holds neither thread nor connection
      long every = Math.max(100, lease.toMillis() / 3);
      timer.scheduleWithFixedDelay(this::renewAll, every, every, TimeUnit.MILLISECONDS);
    }
    reserve();
  }

  /**
   * Reserves the keeper's connection if it has none yet (called before a claim, so that the claim's renewals do not
   * depend on the pool having a connection free after it); a failure is logged and retried at the next renewal.
   */
  void reserve() {
    // one thread reserves, the others go on: with the database down they must not queue for its connect timeout
    if (connection != null || !reserving.compareAndSet(false, true)) {
      return;
    }
    try {
      // opened outside the monitor: renewals never wait for a connection being opened (issue: a stampeded pool's
      // timeouts, one after the other under the monitor, outlasted the lease)
      install(open());
    } catch (SQLException e) {
      if (live.isEmpty()) { // no lease depends on it yet: the claim that follows reports the outage
        log.debug("The lease keeper could not reserve its connection ({})", e.toString());
      } else {
        log.warn("The lease keeper could not reserve its connection ({}); retrying at the next renewal", e.toString());
      }
    } finally {
      reserving.set(false);
    }
  }

  /** Stops renewing {@code owner}'s lease. */
  void stop(UUID owner) {
    live.remove(owner);
  }

  /** Makes {@code c} the keeper's connection, unless another was installed meanwhile (then {@code c} is closed). */
  private void install(Connection c) {
    synchronized (this) {
      if (connection == null && !timer.isShutdown()) {
        connection = c;
        return;
      }
    }
    try {
      c.close();
    } catch (SQLException e) {
      log.debug("Closing a spare lease keeper connection failed: {}", e.toString());
    }
  }

  /** Opens a replacement connection on the opener thread (at most one attempt at a time), then renews at once. */
  private void reopenAsync() {
    if (!reserving.compareAndSet(false, true)) {
      return;
    }
    try {
      opener.execute(() -> {
        try {
          install(open());
        } catch (SQLException | RuntimeException e) {
          log.warn("The lease keeper could not open a connection ({}); retrying at the next renewal", e.toString());
          return;
        } finally {
          reserving.set(false);
        }
        if (!timer.isShutdown()) {
          timer.execute(this::renewAll); // the leases waited: renew now, not at the next tick
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      reserving.set(false);
    }
  }

  private Connection open() throws SQLException {
    Connection c = dataSource.getConnection();
    c.setAutoCommit(true);
    return c;
  }

  /**
   * Renews every live claim on the keeper's connection. It never opens one itself: without a (working) connection it
   * asks the opener thread for one and returns, so a slow pool delays renewals by one connection wait at most.
   */
  synchronized void renewAll() {
    List<Claim> claims = new ArrayList<>(live.values());
    if (claims.isEmpty()) {
      return;
    }
    try {
      if (connection == null) {
        log.warn("{} Idempotency-Key leases wait for the lease keeper's connection", claims.size());
      } else {
        Set<UUID> renewed = owners(connection, RENEW, claims, true);
        List<Claim> missed = claims.stream().filter(c -> !renewed.contains(c.owner())).toList();
        Set<UUID> locked = missed.isEmpty() ? Set.of() : owners(connection, OWNED, missed, false);
        if (!locked.isEmpty()) {
          log.debug("{} Idempotency-Key leases skipped: their rows are locked by a transaction", locked.size());
        }
        for (Claim c : missed) {
          if (!locked.contains(c.owner()) && live.remove(c.owner()) != null) {
            log.warn("Idempotency-Key '{}' of tenant '{}': the claim of its running handler was taken over", c.key(),
                c.tenant());
          }
        }
        return;
      }
    } catch (SQLException | RuntimeException e) {
      closeConnection();
      log.warn("{} Idempotency-Key leases could not be renewed ({}); reopening the connection", claims.size(),
          e.toString());
    }
    reopenAsync();
  }

  /** Runs {@code sql} for {@code claims} (with the lease as its first parameter when {@code lease}): the owners found. */
  private Set<UUID> owners(Connection c, String sql, List<Claim> claims, boolean withLease) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      int i = 1;
      if (withLease) {
        ps.setLong(i++, lease.toMillis());
      }
      ps.setArray(i++, c.createArrayOf("varchar", claims.stream().map(Claim::tenant).toArray()));
      ps.setArray(i++, c.createArrayOf("varchar", claims.stream().map(Claim::key).toArray()));
      ps.setArray(i, c.createArrayOf("uuid", claims.stream().map(Claim::owner).toArray()));
      Set<UUID> found = new HashSet<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          found.add((UUID) rs.getObject(1));
        }
      }
      return found;
    }
  }

  private void closeConnection() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        log.debug("Closing the lease keeper's connection failed: {}", e.toString());
      }
      connection = null;
    }
  }

  /** Stops the renewals and gives the connection back. */
  @Override
  public void close() {
    timer.shutdownNow();
    opener.shutdownNow();
    synchronized (this) {
      closeConnection();
    }
  }
}
