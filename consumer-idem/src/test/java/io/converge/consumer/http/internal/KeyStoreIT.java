package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.core.Migrations;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Storing a key's answer on the real PostgreSQL while its connections fail for a moment (a database restart): the
 * answer is stored once the database is back, within the budget, so the client's retry replays it instead of getting
 * {@code 409 answer-lost}; storing twice for the same owner is harmless.
 */
@ExtendWith(PostgresExtension.class)
class KeyStoreIT {

  private static DataSource ds;

  @BeforeAll
  static void tables(DataSource dataSource) {
    ds = dataSource;
    Migrations.apply(ds, "idempotency");
  }

  @Test
  void anAnswerIsStoredOnceTheDatabaseIsBackWithinTheBudget() throws Exception {
    AtomicInteger failuresLeft = new AtomicInteger(0);
    KeyStore store = new KeyStore(failing(ds, failuresLeft), Duration.ofHours(1), Duration.ofSeconds(30));
    String key = "restart-" + UUID.randomUUID();
    KeyStore.Decision d = store.claim(request(key));
    assertThat(d).isInstanceOf(KeyStore.Claimed.class); // the failures start after the claim
    UUID owner = ((KeyStore.Claimed) d).owner();
    failuresLeft.set(3);
    StoredResponse answer = new StoredResponse(201, Map.of(), "{\"id\":\"ord-1\"}".getBytes());

    assertThat(store.complete("t", key, owner, answer, Duration.ofSeconds(10))).isTrue();
    assertThat(failuresLeft.get()).isZero();
    assertThat(stored(key)).isEqualTo("COMPLETED 201");
    // stored again by the same owner (a first attempt that applied but whose answer was lost): still true
    assertThat(store.complete("t", key, owner, answer, Duration.ofSeconds(1))).isTrue();
    // another owner never completes it
    assertThat(store.complete("t", key, UUID.randomUUID(), answer, Duration.ofSeconds(1))).isFalse();
  }

  /**
   * Issue 31.1: a release never deletes a claim whose work may have committed. The filter releases a key when its
   * handler failed on an outage and it saw no commit; a commit it did not see (its marker committed) keeps the claim,
   * so that a retry after the lease gets 409 answer-lost instead of running the work again.
   */
  @Test
  void aClaimWhoseWorkCommittedIsNeverReleased() throws Exception {
    KeyStore store = new KeyStore(ds, Duration.ofHours(1), Duration.ofSeconds(30));
    String key = "marked-" + UUID.randomUUID();
    UUID owner = claim(store, key);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(true);
      assertThat(KeyStore.markWorkCommitted(c, "t", key, owner)).isTrue();
    }
    assertThat(store.release("t", key, owner)).isFalse();
    assertThat(status(key)).as("the claim is kept").isEqualTo("PROCESSING");

    String unmarked = "unmarked-" + UUID.randomUUID();
    assertThat(store.release("t", unmarked, claim(store, unmarked))).isTrue();
    assertThat(status(unmarked)).as("released").isNull();
  }

  /**
   * Issue 31.9: the handler's transaction holds its claim's row locked from the marker's UPDATE to its COMMIT (a
   * NESTED savepoint's release marks it too, early). The renewal of the instance's leases must not wait for it: the
   * other claims are renewed at once, and the locked one is kept and renewed once its row is free.
   */
  @Test
  void aClaimRowLockedByItsHandlersTransactionHoldsNoOtherLeaseBack() throws Exception {
    KeyStore store = new KeyStore(ds, Duration.ofHours(1), Duration.ofSeconds(30));
    String locked = "locked-" + UUID.randomUUID();
    String other = "other-" + UUID.randomUUID();
    UUID lockedOwner = claim(store, locked);
    UUID otherOwner = claim(store, other);
    try (LeaseKeeper keeper = new LeaseKeeper(ds, Duration.ofSeconds(30)); Connection handler = ds.getConnection()) {
      keeper.keep(new LeaseKeeper.Claim("t", locked, lockedOwner));
      keeper.keep(new LeaseKeeper.Claim("t", other, otherOwner));
      shortenLeases(locked, other);
      handler.setAutoCommit(false);
      assertThat(KeyStore.markWorkCommitted(handler, "t", locked, lockedOwner)).isTrue(); // the row stays locked

      CompletableFuture<Void> renewal = CompletableFuture.runAsync(keeper::renewAll);
      renewal.get(5, TimeUnit.SECONDS);
      assertThat(leaseLeftSeconds(other)).as("renewed past the locked row").isGreaterThan(20);
      assertThat(leaseLeftSeconds(locked)).as("the locked row was skipped").isLessThan(5);

      handler.rollback();
      keeper.renewAll();
      assertThat(leaseLeftSeconds(locked)).as("still kept, renewed once its row is free").isGreaterThan(20);
    }
  }

  private static UUID claim(KeyStore store, String key) {
    KeyStore.Decision d = store.claim(request(key));
    assertThat(d).isInstanceOf(KeyStore.Claimed.class);
    return ((KeyStore.Claimed) d).owner();
  }

  private static void shortenLeases(String... keys) throws SQLException {
    try (Connection c = ds.getConnection();
        java.sql.PreparedStatement ps = c.prepareStatement(
            "UPDATE converge_idempotency_key SET leased_until = now() + interval '2 seconds' WHERE tenant = 't' "
                + "AND idem_key = ?")) {
      c.setAutoCommit(true);
      for (String key : keys) {
        ps.setString(1, key);
        assertThat(ps.executeUpdate()).isEqualTo(1);
      }
    }
  }

  private static double leaseLeftSeconds(String key) throws SQLException {
    try (Connection c = ds.getConnection();
        java.sql.PreparedStatement ps = c.prepareStatement(
            "SELECT extract(epoch FROM leased_until - now()) FROM converge_idempotency_key WHERE tenant = 't' "
                + "AND idem_key = ?")) {
      ps.setString(1, key);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getDouble(1);
      }
    }
  }

  private static String status(String key) throws SQLException {
    return column("status", key);
  }

  private static String stored(String key) throws SQLException {
    return column("status || ' ' || response_status", key);
  }

  /** {@code expression} of key {@code key}'s row of tenant t; null when there is none. */
  private static String column(String expression, String key) throws SQLException {
    try (Connection c = ds.getConnection();
        java.sql.PreparedStatement ps = c.prepareStatement(
            "SELECT " + expression + " FROM converge_idempotency_key WHERE tenant = 't' AND idem_key = ?")) {
      ps.setString(1, key);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  private static KeyStore.Request request(String key) {
    return new KeyStore.Request("t", key, "fp", "POST", "/orders", Duration.ofSeconds(5));
  }

  /** {@code ds}, whose next {@code failuresLeft} connections fail as a restarting server's do. */
  private static DataSource failing(DataSource ds, AtomicInteger failuresLeft) {
    return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
        (proxy, method, args) -> {
          if (method.getName().equals("getConnection") && failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new SQLTransientConnectionException("the database system is starting up", "57P03");
          }
          try {
            return method.invoke(ds, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }
}
