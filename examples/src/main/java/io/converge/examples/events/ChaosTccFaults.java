package io.converge.examples.events;

import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnContext;
import io.converge.saga.SagaHeaders;
import io.converge.saga.tcc.TccHeaders;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TCC half of the chaos-only hook {@link ChaosReplyFaults} (same property, same tables of shots): in the
 * coordinator's service (the order service), the commands of a TCC branch its saga publishes. Each shot is armed in
 * the coordinator's database by the chaos run and taken in the transition's own transaction, so that the shot, the
 * kept message and the coordinator's send (its {@code SENT} event) commit together or not at all.
 *
 * <ul>
 *   <li>{@code hold} (step {@code try}): the next forward Try of a saga that nothing else disturbed yet (no timeout,
 *       no re-send, no retry in its timeline) is not published, and neither is any re-send of it: the messages are kept
 *       in {@value #KEPT}. The coordinator times the Try out, asks again (kept too), waits for its global timeout and
 *       cancels the branch; the chaos run sends the kept Tries, with their own ids, once the Cancel was applied. This
 *       is the delay of a message in transit (a producer's retry, a broker's slow queue): the coordinator committed its
 *       send, the participant sees it after the Cancel. Holding the participant's consumer instead would block its
 *       ordered queue, every order behind the Try, for the whole global timeout.</li>
 *   <li>{@code copy} (step {@code confirm} or {@code cancel}): the next Confirm, or Cancel, is published as usual and a
 *       copy kept, for the chaos run to deliver a second time (with its id, and with a new one).</li>
 * </ul>
 */
final class ChaosTccFaults {

  /** The messages kept: {@code purpose (hold|copy), saga_id, topic, id, msg_key, tenant, names, vals, payload}. */
  static final String KEPT = "examples_chaos_kept";

  /** The table of kept messages, for the chaos run to create in the coordinator's database with the shots'. */
  static final String DDL = """
      CREATE TABLE IF NOT EXISTS examples_chaos_kept (seq bigserial PRIMARY KEY, purpose text NOT NULL,
        saga_id text NOT NULL, topic text NOT NULL, id text NOT NULL, msg_key text, tenant text,
        names text[] NOT NULL, vals text[] NOT NULL, payload bytea NOT NULL, at timestamptz NOT NULL DEFAULT now())""";

  private static final Logger log = LoggerFactory.getLogger(ChaosTccFaults.class);

  private static final String TAKE = """
      UPDATE examples_chaos_reply_fault SET taken = true
       WHERE id = (SELECT id FROM examples_chaos_reply_fault WHERE kind = ? AND step = ? AND NOT taken ORDER BY id
                   LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING id""";
  private static final String HELD = "SELECT 1 FROM examples_chaos_reply_hit WHERE saga_id = ? AND kind = 'hold'";
  private static final String DISTURBED = """
      SELECT 1 FROM converge_saga_event WHERE saga_id = ? AND kind IN ('TIMED_OUT', 'RESENT', 'RETRIED') LIMIT 1""";
  private static final String HIT = "INSERT INTO examples_chaos_reply_hit (saga_id, step, kind, command_id)"
      + " VALUES (?, ?, ?, ?)";
  private static final String KEEP = "INSERT INTO examples_chaos_kept (purpose, saga_id, topic, id, msg_key, tenant,"
      + " names, vals, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";

  private ChaosTccFaults() {
  }

  /** Whether {@code m} is a TCC branch's command (not a reply): the commands this hook may hold or copy. */
  static boolean isCommand(OutgoingMessage m) {
    return m.headers().get(TccHeaders.OPERATION) != null && m.headers().get(SagaHeaders.SAGA_ID) != null
        && m.headers().get(SagaHeaders.OUTCOME) == null;
  }

  /** Publishes, holds or copies a TCC command, as the armed shots say; the shots' table exists. */
  static String publish(TxnContext tx, OutgoingMessage m) throws SQLException {
    Connection c = tx.connection();
    String saga = m.headers().get(SagaHeaders.SAGA_ID);
    String operation = m.headers().get(TccHeaders.OPERATION);
    String id = m.id() != null ? m.id() : UUID.randomUUID().toString();
    if ("try".equals(operation)) {
      boolean again = exists(c, HELD, saga);
      if (again || (!exists(c, DISTURBED, saga) && take(c, "hold", operation))) {
        if (!again) {
          hit(c, saga, m, "hold");
        }
        keep(c, "hold", saga, id, m);
        log.warn("chaos: the Try of saga {} (branch '{}', command {}) is held back, not published", saga,
            m.headers().get(TccHeaders.BRANCH_ID), m.headers().get(SagaHeaders.COMMAND_ID));
        return id;
      }
      return tx.publish(m);
    }
    if (take(c, "copy", operation)) {
      hit(c, saga, m, "copy");
      keep(c, "copy", saga, id, m);
      log.warn("chaos: the {} of saga {} is published and a copy kept, to be delivered again", operation, saga);
    }
    return tx.publish(m);
  }

  private static boolean take(Connection c, String kind, String step) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(TAKE)) {
      ps.setString(1, kind);
      ps.setString(2, step);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  private static boolean exists(Connection c, String sql, String saga) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, saga);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  private static void hit(Connection c, String saga, OutgoingMessage m, String kind) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(HIT)) {
      ps.setString(1, saga);
      ps.setString(2, m.headers().get(SagaHeaders.STEP));
      ps.setString(3, kind);
      ps.setString(4, m.headers().get(SagaHeaders.COMMAND_ID));
      ps.executeUpdate();
    }
  }

  private static void keep(Connection c, String purpose, String saga, String id, OutgoingMessage m)
      throws SQLException {
    Map<String, String> headers = m.headers();
    String[] names = headers.keySet().toArray(String[]::new);
    String[] values = new String[names.length];
    for (int i = 0; i < names.length; i++) {
      values[i] = headers.get(names[i]);
    }
    Array n = c.createArrayOf("text", names);
    Array v = c.createArrayOf("text", values);
    try (PreparedStatement ps = c.prepareStatement(KEEP)) {
      ps.setString(1, purpose);
      ps.setString(2, saga);
      ps.setString(3, m.topic());
      ps.setString(4, id);
      ps.setString(5, m.key());
      ps.setString(6, m.tenant());
      ps.setArray(7, n);
      ps.setArray(8, v);
      ps.setBytes(9, m.payload());
      ps.executeUpdate();
    } finally {
      n.free();
      v.free();
    }
  }
}
