package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.producer.schema.Migrations;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
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

  private static String stored(String key) throws SQLException {
    try (Connection c = ds.getConnection();
        java.sql.PreparedStatement ps = c.prepareStatement(
            "SELECT status || ' ' || response_status FROM converge_idempotency_key WHERE tenant = 't' AND idem_key = ?")) {
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
