package io.converge.consumer;

import io.converge.core.Envelope;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;

/** Small JDBC helpers for the integration tests. */
final class Db {

  /** A failure policy with short backoffs, for tests that retry. */
  static final FailurePolicy FAST = FailurePolicy.defaults().withBackoff(Duration.ofMillis(5), Duration.ofMillis(20));

  private Db() {
  }

  /** The consumer migrations and the {@code ledger} table of {@link #insertLedger}. */
  static void consumerTablesAndLedger(DataSource ds) {
    Migrations.apply(ds, "consumer");
    exec(ds, "CREATE TABLE ledger (id BIGSERIAL PRIMARY KEY, message_id TEXT, body TEXT)");
  }

  /** How many ledger rows message {@code id} left. */
  static long effects(DataSource ds, String id) {
    return count(ds, "SELECT count(*) FROM ledger WHERE message_id = '" + id + "'");
  }

  static void exec(DataSource ds, String sql) {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }

  static long count(DataSource ds, String sql) {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }

  static String string(DataSource ds, String sql) {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }

  /** The first message of {@code key} on {@code payments}, with a {@code poison} header the handlers refuse. */
  static IncomingMessage poisonedHead(String key) {
    return IncomingMessage.builder().topic("payments").header(Envelope.MESSAGE_ID, "h-" + key)
        .header("poison", "yes").brokerKey(key).payload("{}").build();
  }

  /** The handler's business effect: one ledger row per run, no unique constraint (dedup must do it). */
  static void insertLedger(Connection c, IncomingMessage m) throws java.sql.SQLException {
    try (var ps = c.prepareStatement("INSERT INTO ledger (message_id, body) VALUES (?, ?)")) {
      ps.setString(1, m.envelopeMessageId());
      ps.setString(2, m.payloadAsString());
      ps.executeUpdate();
    }
  }
}
