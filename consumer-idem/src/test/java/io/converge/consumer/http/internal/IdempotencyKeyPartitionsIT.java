package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.http.IdempotencyKeyPurger;
import io.converge.core.Migrations;
import io.converge.core.internal.BatchPurger.Cutoff;
import io.converge.core.internal.DayPartitions;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * converge_idempotency_key partitioned by the day a key was first claimed (consumer-idem README, "Idempotency-Key
 * partitions by day"): a key is claimed once whichever partitions its claims would go to, a key whose row lives in an
 * older partition is answered as before, expired day partitions are dropped whole and only then, the migration from
 * the unpartitioned table keeps its keys. Each test has a schema of its own (partitions are per schema). Days are the
 * database's: a claim "yesterday" is made with the claim function's day argument, which the store leaves null.
 */
class IdempotencyKeyPartitionsIT {

  private static final String FP = "f".repeat(64);
  private static final String OTHER_FP = "e".repeat(64);
  private static final DateTimeFormatter SUFFIX = DateTimeFormatter.BASIC_ISO_DATE;

  private static DataSource schema() {
    DataSource ds = ConvergePostgres.shared().newSchema("idparts");
    Migrations.apply(ds, "idempotency");
    return ds;
  }

  private static DayPartitions partitions(DataSource ds) {
    return IdempotencyKeyPurger.partitions(ds);
  }

  private static KeyStore store(DataSource ds) {
    return new KeyStore(ds, Duration.ofHours(1), Duration.ofSeconds(30));
  }

  private static KeyStore.Request request(String key, String fingerprint) {
    return new KeyStore.Request("t", key, fingerprint, "POST", "/orders", Duration.ofSeconds(5));
  }

  private static String key(String prefix) {
    return prefix + "-" + UUID.randomUUID();
  }

  /** Claims {@code key} on {@code c} as the store does, its row in {@code day}'s partition (as if claimed that day). */
  private static boolean claimOn(Connection c, String key, UUID owner, LocalDate day) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT converge_idempotency_claim(?, 'POST', '/orders', ?, 30000, 5000, 3600000, 't', ?, ?)")) {
      ps.setString(1, FP);
      ps.setObject(2, owner);
      ps.setString(3, key);
      ps.setObject(4, day);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  /** {@link #claimOn} in a transaction of its own; the claim's owner. */
  private static UUID claimed(DataSource ds, String key, LocalDate day) throws SQLException {
    UUID owner = UUID.randomUUID();
    try (Connection c = ds.getConnection()) {
      assertThat(claimOn(c, key, owner, day)).as(key).isTrue();
    }
    return owner;
  }

  private static String partition(LocalDate day) {
    return "converge_idempotency_key_p" + SUFFIX.format(day);
  }

  private static String partitionOf(DataSource ds, String key) throws SQLException {
    return string(ds, "SELECT tableoid::regclass::text FROM converge_idempotency_key WHERE idem_key = ?", key);
  }

  private static long rows(DataSource ds, String key) throws SQLException {
    return Long.parseLong(string(ds, "SELECT count(*) FROM converge_idempotency_key WHERE idem_key = ?", key));
  }

  private static String string(DataSource ds, String sql, Object... args) throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  private static int update(DataSource ds, String sql, Object... args) throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      return ps.executeUpdate();
    }
  }

  /**
   * What {@code store} decides for {@code key} while a claim of it made at 23:59:59.9 (its row in yesterday's
   * partition) is not committed yet; the store's claim goes to today's partition.
   */
  private static KeyStore.Decision claimWhileYesterdaysClaimIsInFlight(DataSource ds, KeyStore store, String key)
      throws Exception {
    LocalDate yesterday = partitions(ds).databaseDay().minusDays(1);
    partitions(ds).createAhead(yesterday, 2);
    CompletableFuture<KeyStore.Decision> second;
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThat(claimOn(c, key, UUID.randomUUID(), yesterday)).isTrue();
      second = CompletableFuture.supplyAsync(() -> store.claim(request(key, FP)));
      Thread.sleep(300);
      assertThat(second).as("waits for the first claim of the key").isNotDone();
      c.commit();
    }
    return second.get(10, TimeUnit.SECONDS);
  }

  /** A row written without the claim function (its lock and lookup): what only the partitions' primary keys stop. */
  private static void insertUnguarded(DataSource ds, String key, LocalDate day) throws SQLException {
    update(ds, """
        INSERT INTO converge_idempotency_key (tenant, idem_key, fingerprint, method, path, status, lease_owner,
            leased_until, expected_ms, claimed_at, expires_at, day)
        VALUES ('t', ?, ?, 'POST', '/orders', 'PROCESSING', gen_random_uuid(), now() + interval '30 seconds', 5000,
                now(), now() + interval '1 hour', ?)
        ON CONFLICT DO NOTHING""", key, FP, day);
  }

  /**
   * The first claim is made at 23:59:59.9 (its row goes to yesterday's partition) and is not committed yet when a
   * retry with the key comes just after midnight (its row would go to today's partition): no primary key spans both,
   * the claim function's lock and lookup make the second wait and find the first.
   */
  @Test
  void twoConcurrentClaimsOfOneKeyAcrossADayBoundaryClaimItOnce() throws Exception {
    DataSource ds = schema();
    LocalDate today = partitions(ds).databaseDay();
    LocalDate yesterday = today.minusDays(1);
    String key = key("boundary");
    assertThat(claimWhileYesterdaysClaimIsInFlight(ds, store(ds), key)).isInstanceOf(KeyStore.Busy.class);
    assertThat(rows(ds, key)).isOne();
    assertThat(partitionOf(ds, key)).isEqualTo(partition(yesterday));

    // the other way round, both through the function: today's claim first, then one routed to yesterday
    String other = key("boundary");
    claimed(ds, other, today);
    try (Connection c = ds.getConnection()) {
      assertThat(claimOn(c, other, UUID.randomUUID(), yesterday)).isFalse();
    }
    assertThat(rows(ds, other)).isOne();

    // what the partitions' own primary keys allow without the function: the key twice
    String unguarded = key("unguarded");
    insertUnguarded(ds, unguarded, yesterday);
    insertUnguarded(ds, unguarded, today);
    assertThat(rows(ds, unguarded)).isEqualTo(2);
  }

  @Test
  void aKeyWhoseRowLivesInAnOlderPartitionIsReplayedOrConflictsAsBefore() throws Exception {
    DataSource ds = schema();
    LocalDate today = partitions(ds).databaseDay();
    LocalDate older = today.minusDays(2);
    partitions(ds).createAhead(older, 3);
    KeyStore store = store(ds);
    String done = key("done");
    UUID owner = claimed(ds, done, older);
    byte[] body = "{\"id\":\"ord-1\"}".getBytes(StandardCharsets.UTF_8);
    assertThat(store.complete("t", done, owner, new StoredResponse(201, Map.of(), body))).isTrue();
    String running = key("running");
    claimed(ds, running, older);

    KeyStore.Decision replay = store.claim(request(done, FP));
    assertThat(replay).isInstanceOf(KeyStore.Replay.class);
    assertThat(((KeyStore.Replay) replay).response().status()).isEqualTo(201);
    assertThat(((KeyStore.Replay) replay).response().body()).isEqualTo(body);
    assertThat(store.claim(request(done, OTHER_FP))).isInstanceOf(KeyStore.Mismatch.class);
    assertThat(store.claim(request(running, FP))).isInstanceOf(KeyStore.Busy.class);
    for (String key : List.of(done, running)) {
      assertThat(rows(ds, key)).as(key).isOne();
      assertThat(partitionOf(ds, key)).as(key).isEqualTo(partition(older));
    }
  }

  /** A takeover is an UPDATE in place: the row stays in its partition, whose life it extends (see the retention). */
  @Test
  void anExpiredOrAbandonedRowIsTakenOverInItsPartition() throws Exception {
    DataSource ds = schema();
    LocalDate older = partitions(ds).databaseDay().minusDays(2);
    partitions(ds).createAhead(older, 1);
    KeyStore store = store(ds);
    String expired = key("expired");
    UUID owner = claimed(ds, expired, older);
    store.complete("t", expired, owner, new StoredResponse(201, Map.of(), new byte[0]));
    update(ds, "UPDATE converge_idempotency_key SET expires_at = now() - interval '1 second' WHERE idem_key = ?",
        expired);
    String abandoned = key("abandoned");
    claimed(ds, abandoned, older);
    update(ds, "UPDATE converge_idempotency_key SET leased_until = now() - interval '1 second' WHERE idem_key = ?",
        abandoned);

    KeyStore.Decision renewed = store.claim(request(expired, OTHER_FP)); // an expired key is new, whatever its body
    assertThat(renewed).isInstanceOf(KeyStore.Claimed.class);
    assertThat(((KeyStore.Claimed) renewed).takenOver()).isFalse();
    KeyStore.Decision taken = store.claim(request(abandoned, FP));
    assertThat(taken).isInstanceOf(KeyStore.Claimed.class);
    assertThat(((KeyStore.Claimed) taken).takenOver()).isTrue();
    // the abandoned claim is taken over where it is; the expired key's row is replaced by a new claim, routed as any
    // new one (the catch-all here: today has no partition), so that a reused key never keeps its first day's
    // partition from being dropped
    assertThat(partitionOf(ds, abandoned)).isEqualTo(partition(older));
    assertThat(partitionOf(ds, expired)).isEqualTo("converge_idempotency_key_catchall");
    assertThat(partitions(ds).dropExpired(older.plusDays(1), Cutoff.olderThan(Duration.ZERO))).as(
        "the older day holds a live claim still").isEmpty();
    for (String key : List.of(expired, abandoned)) {
      assertThat(rows(ds, key)).as(key).isOne();
      assertThat(string(ds, "SELECT expires_at > now() + interval '50 minutes' FROM converge_idempotency_key"
          + " WHERE idem_key = ?", key)).as(key).isEqualTo("t");
    }
  }

  /**
   * A claim that waited for the key's lock (another claim of it, or any transaction holding that lock) starts its lease
   * when it has the lock, not when its transaction started: a claim that had waited longer than the lease was inserted
   * with its lease already run down, and a retry could take it over while its handler ran. The lock is the two-key
   * form, apart from every one-key advisory lock (the outbox's per-key locks, an application's).
   */
  @Test
  void aClaimThatWaitedForTheKeysLockStartsItsLeaseWhenItHasIt() throws Exception {
    DataSource ds = schema();
    String key = key("waited");
    CompletableFuture<Boolean> claim;
    String released;
    try (Connection holder = ds.getConnection(); Connection claimer = ds.getConnection()) {
      holder.setAutoCommit(false);
      try (PreparedStatement ps = holder.prepareStatement("SELECT pg_advisory_xact_lock(hashtext("
          + "'converge_idempotency_key'), hashtext(length('t') || ':t' || ?))")) {
        ps.setString(1, key);
        ps.execute();
      }
      try (PreparedStatement ps = holder.prepareStatement("SELECT pg_advisory_lock(hashtextextended("
          + "'converge_idempotency_key:' || length('t') || ':t' || ?, 0))")) {
        ps.setString(1, key); // the one-key lock of the same text: another lock space, held across the claim
        ps.execute();
      }
      claimer.setAutoCommit(false);
      claim = CompletableFuture.supplyAsync(() -> {
        try (PreparedStatement ps = claimer.prepareStatement(
            "SELECT converge_idempotency_claim(?, 'POST', '/orders', ?, 1000, 500, 3600000, 't', ?, NULL)")) {
          ps.setString(1, FP);
          ps.setObject(2, UUID.randomUUID());
          ps.setString(3, key);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            boolean claimed = rs.getBoolean(1);
            claimer.commit();
            return claimed;
          }
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
      });
      Thread.sleep(1500); // longer than the claim's 1 s lease
      assertThat(claim).as("the claim waits for the key's lock").isNotDone();
      try (Statement s = holder.createStatement(); ResultSet rs = s.executeQuery("SELECT clock_timestamp()::text")) {
        rs.next();
        released = rs.getString(1);
      }
      holder.commit();
      assertThat(claim.get(10, TimeUnit.SECONDS)).isTrue();
      try (Statement s = holder.createStatement()) {
        s.execute("SELECT pg_advisory_unlock_all()");
      }
      holder.commit();
    }
    assertThat(string(ds, "SELECT claimed_at >= ?::timestamptz AND leased_until > claimed_at"
        + " FROM converge_idempotency_key WHERE idem_key = ?", released, key)).isEqualTo("t");
  }

  @Test
  void aDayPartitionIsDroppedOnlyOnceEveryRowInItIsPastItsExpiryAndItsLease() throws Exception {
    DataSource ds = schema();
    LocalDate today = partitions(ds).databaseDay();
    LocalDate d1 = today.minusDays(1);
    LocalDate d2 = today.minusDays(2);
    LocalDate d3 = today.minusDays(3);
    LocalDate d4 = today.minusDays(4);
    partitions(ds).createAhead(d4, 8); // the four days before today, today and the next three
    String expire = "UPDATE converge_idempotency_key SET expires_at = now() - interval '1 second',"
        + " leased_until = now() - interval '1 second' WHERE idem_key = ?";
    String gone = key("gone");
    claimed(ds, gone, d1);
    update(ds, expire, gone);
    String stale = key("stale");
    String live = key("live");
    claimed(ds, stale, d2);
    update(ds, expire, stale);
    UUID liveOwner = claimed(ds, live, d2);
    store(ds).complete("t", live, liveOwner, new StoredResponse(200, Map.of(), new byte[0]));
    // a handler running past its key's TTL: the key has expired, its lease is still being renewed
    String slow = key("slow");
    claimed(ds, slow, d3);
    update(ds, "UPDATE converge_idempotency_key SET expires_at = now() - interval '1 second',"
        + " leased_until = now() + interval '1 minute' WHERE idem_key = ?", slow);
    // an expired row being taken over right now: the takeover's transaction is not committed yet
    String retried = key("retried");
    claimed(ds, retried, d4);
    update(ds, expire, retried);

    IdempotencyKeyPurger purger = new IdempotencyKeyPurger(ds, 100);
    try (Connection takeover = ds.getConnection()) {
      takeover.setAutoCommit(false);
      try (PreparedStatement ps = takeover.prepareStatement("UPDATE converge_idempotency_key SET expires_at = now()"
          + " + interval '1 hour', leased_until = now() + interval '30 seconds' WHERE idem_key = ?")) {
        ps.setString(1, retried);
        assertThat(ps.executeUpdate()).isOne();
      }
      long started = System.nanoTime();
      purger.purgeExpired(1);
      assertThat(Duration.ofNanos(System.nanoTime() - started)).as("the purge gave up its locks instead of queuing")
          .isLessThan(Duration.ofSeconds(5));
      assertThat(partitions(ds).list()).as("every drop waited for the takeover's lock and gave up").contains(d1, d4);

      CompletableFuture<List<LocalDate>> patientDrop = CompletableFuture.supplyAsync(() -> partitions(ds)
          .lockTimeout(Duration.ofSeconds(30)).dropExpired(today, Cutoff.olderThan(Duration.ZERO)));
      Thread.sleep(300);
      assertThat(patientDrop).as("waits for the takeover's transaction").isNotDone();
      takeover.commit();
      assertThat(patientDrop.get(10, TimeUnit.SECONDS)).as("the takeover committed meanwhile: d4 kept, d1 dropped")
          .containsExactly(d1);
    }
    assertThat(partitions(ds).list()).as("a live key keeps d2, a running handler d3, the takeover d4")
        .doesNotContain(d1).contains(d2, d3, d4, today, today.plusDays(3));
    assertThat(store(ds).claim(request(live, FP))).isInstanceOf(KeyStore.Replay.class);

    update(ds, expire, live);
    update(ds, expire, slow);
    update(ds, expire, retried);
    purger.purgeExpired(1);
    assertThat(partitions(ds).list()).as("dropped whole; today's and the next days' kept")
        .containsExactly(today, today.plusDays(1), today.plusDays(2), today.plusDays(3));
    assertThat(store(ds).claim(request(live, OTHER_FP))).as("expired and dropped: a new request")
        .isInstanceOf(KeyStore.Claimed.class);
    assertThat(partitionOf(ds, live)).isEqualTo(partition(today));
  }

  /**
   * Partitions are created in their parent's schema and claims route to them there, whatever an instance's search
   * path (as converge_dedup's, DedupPartitionsIT).
   */
  @Test
  void partitionsLiveInTheirParentsSchemaSoEverySearchPathFindsAKey() throws Exception {
    DataSource ds = schema();
    String home = string(ds, "SELECT current_schema()");
    String other = string(ConvergePostgres.shared().newSchema("idpartso"), "SELECT current_schema()");
    DataSource otherFirst = ConvergePostgres.shared().dataSource(other + "," + home);
    new IdempotencyKeyPurger(otherFirst, 100).purgeExpired(1);
    assertThat(string(ds, "SELECT count(*) FROM pg_class WHERE relkind = 'r'"
        + " AND relname ~ '^converge_idempotency_key_p[0-9]{8}$' AND relnamespace = ?::regnamespace", home))
        .isEqualTo("4");
    String key = key("path");
    assertThat(store(otherFirst).claim(request(key, FP))).isInstanceOf(KeyStore.Claimed.class);
    assertThat(store(ds).claim(request(key, FP))).as("the same key on the schema's own search path")
        .isInstanceOf(KeyStore.Busy.class);
    assertThat(partitionOf(ds, key)).isEqualTo(partition(partitions(ds).databaseDay()));
  }

  /**
   * In REPEATABLE READ (a pool's or the database's default) the function's lookup would read the snapshot taken before
   * it waited for the key's lock, and insert the key a second time in another partition: it refuses, and the store
   * claims again under READ COMMITTED.
   */
  @Test
  void aClaimOnARepeatableReadConnectionIsStillMadeOnce() throws Exception {
    DataSource ds = schema();
    DataSource repeatableRead = (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(),
        new Class<?>[]{DataSource.class}, (proxy, method, args) -> {
          try {
            Object result = method.invoke(ds, args);
            if (result instanceof Connection c) {
              c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            }
            return result;
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    String key = key("rr");
    assertThat(claimWhileYesterdaysClaimIsInFlight(ds, store(repeatableRead), key))
        .isInstanceOf(KeyStore.Busy.class);
    assertThat(rows(ds, key)).isOne();
    String fresh = key("rr-fresh");
    assertThat(store(repeatableRead).claim(request(fresh, FP))).isInstanceOf(KeyStore.Claimed.class);
  }

  @Test
  void theMigrationKeepsTheKeysOfThePopulatedUnpartitionedTable() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("idparts");
    Flyway.configure(Migrations.class.getClassLoader()).dataSource(ds).locations("classpath:db/converge/idempotency")
        .table("converge_schema_history_idempotency").baselineOnMigrate(true).baselineVersion("0").target("2").load()
        .migrate();
    update(ds, """
        INSERT INTO converge_idempotency_key (tenant, idem_key, fingerprint, method, path, status, lease_owner,
            leased_until, expected_ms, claimed_at, expires_at, completed_at, response_status, response_headers,
            response_body)
        SELECT 't', 'old-' || g, ?, 'POST', '/orders', 'COMPLETED', gen_random_uuid(), now(), 5000,
               now() - interval '1 hour', now() + interval '23 hours', now(), 201, '',
               convert_to('{"id":"ord-' || g || '"}', 'UTF8')
          FROM generate_series(1, 1000) g""", FP);
    update(ds,
        """
            INSERT INTO converge_idempotency_key (tenant, idem_key, fingerprint, method, path, status, lease_owner,
                leased_until, expected_ms, claimed_at, expires_at)
            VALUES ('t', 'old-running', ?, 'POST', '/orders', 'PROCESSING', gen_random_uuid(), now() + interval '30 seconds',
                    5000, now(), now() + interval '1 day')""",
        FP);

    assertThat(Migrations.apply(ds, "idempotency")).isEqualTo(3);
    assertThat(string(ds, "SELECT count(*) FROM converge_idempotency_key_catchall")).isEqualTo("1001");
    new IdempotencyKeyPurger(ds, 100).purgeExpired(1); // today's partition exists: new keys go there
    KeyStore store = store(ds);
    KeyStore.Decision replay = store.claim(request("old-7", FP));
    assertThat(replay).isInstanceOf(KeyStore.Replay.class);
    assertThat(new String(((KeyStore.Replay) replay).response().body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"id\":\"ord-7\"}");
    assertThat(store.claim(request("old-8", OTHER_FP))).isInstanceOf(KeyStore.Mismatch.class);
    assertThat(store.claim(request("old-running", FP))).isInstanceOf(KeyStore.Busy.class);
    assertThat(store.claim(request("new-1", FP))).isInstanceOf(KeyStore.Claimed.class);
    assertThat(partitionOf(ds, "new-1")).isEqualTo(partition(partitions(ds).databaseDay()));
    assertThat(rows(ds, "old-7")).isOne();

    // an instance of an earlier version claims with a plain INSERT (no lock, no lookup, no day): with a default day it
    // would go to the catch-all, whose primary key does not see today's row of the key; refused instead
    assertThatThrownBy(() -> update(ds, """
        INSERT INTO converge_idempotency_key (fingerprint, method, path, lease_owner, leased_until, expected_ms,
            claimed_at, expires_at, tenant, idem_key, status)
        VALUES (?, 'POST', '/orders', gen_random_uuid(), now() + interval '30 seconds', 5000, now(),
            now() + interval '1 day', 't', 'new-1', 'PROCESSING')
        ON CONFLICT DO NOTHING""", FP)).isInstanceOf(SQLException.class)
        .hasMessageContaining("no partition of relation") // day is null: no partition holds a null day
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("23514"));
    assertThat(rows(ds, "new-1")).isOne();
  }
}
