package io.converge.examples.demo;

import io.converge.examples.events.ChaosReplyFaults;
import io.converge.examples.events.Topics;
import io.converge.producer.OutgoingMessage;
import io.converge.saga.SagaHeaders;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The orchestrated flow's reply faults, for {@code converge chaos}: lost and held-back participant replies (armed in
 * the participant's database for the services' {@link ChaosReplyFaults} hook, which must be on), duplicated replies
 * (sent again through the broker's raw client), and the check, after the run, that the saga absorbed each one as its
 * contract says. Every figure is read from the tables (the coordinator's {@code converge_saga_event}, the
 * participants' {@code converge_saga_branch} and the hook's record of the shots it took), never from logs.
 */
public final class SagaReplyFaults {

  /** The step whose replies are dropped: inventory's {@code reserve}. */
  public static final String DROPPED = "reserve";
  /** The step whose reply is held back: notification's {@code notify}. */
  public static final String DELAYED = "notify";

  private SagaReplyFaults() {
  }

  /**
   * Arms {@code drops} lost replies of {@code reserve} and {@code delays} replies of {@code notify} held back for
   * {@code delay} (longer than the step timeout): each is taken by the next forward reply of its step.
   */
  public static void arm(Services s, int drops, int delays, Duration delay) throws SQLException {
    arm(s, "inventory", "drop", DROPPED, drops, Duration.ZERO);
    arm(s, "notification", "delay", DELAYED, delays, delay);
  }

  private static void arm(Services s, String service, String kind, String step, int n, Duration delay)
      throws SQLException {
    try (Connection c = s.db(service).getConnection()) {
      try (Statement st = c.createStatement()) {
        st.execute(ChaosReplyFaults.DDL);
      }
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + ChaosReplyFaults.ARMED
          + " (kind, step, delay_ms) VALUES (?, ?, ?)")) {
        for (int i = 0; i < n; i++) {
          ps.setString(1, kind);
          ps.setString(2, step);
          ps.setLong(3, delay.toMillis());
          ps.addBatch();
        }
        ps.executeBatch();
      }
    }
  }

  /**
   * Sends the applied {@code reserve} reply of every {@code every}-th saga again through {@code raw}, twice: once with
   * its original envelope id (a broker's redelivery: the coordinator's idempotent consumer absorbs it) and once with a
   * new id (the participant answering twice: the coordinator records a {@code DUPLICATE_REPLY} and applies nothing).
   * The reply is rebuilt as the participant replays it: its stored outcome and body, the command's saga headers.
   * Returns how many messages it sent.
   */
  public static int duplicateReplies(Services s, DuplicateInjector raw, int every) throws Exception {
    Map<String, String[]> stored = new HashMap<>();
    try (Connection c = s.db("inventory").getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("""
            SELECT saga_id, command_id, outcome, reply FROM converge_saga_branch
             WHERE participant = 'inventory' AND step = 'reserve' AND direction = 'forward'
               AND outcome IN ('SUCCESS', 'BUSINESS_FAILURE')""")) {
      while (rs.next()) {
        byte[] body = rs.getBytes(4);
        stored.put(rs.getString(1), new String[]{rs.getString(2), rs.getString(3),
            new String(body == null || body.length == 0 ? "{}".getBytes() : body,
                java.nio.charset.StandardCharsets.UTF_8)});
      }
    }
    String topic = s.topics().of(Topics.ORDER_SAGA_REPLIES);
    int sent = 0;
    try (Connection c = s.db("order").getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("""
            SELECT saga_id, attempt, message_id FROM converge_saga_event
             WHERE step = 'reserve' AND kind = 'REPLIED' AND message_id IS NOT NULL ORDER BY seq""")) {
      int row = 0;
      while (rs.next()) {
        String saga = rs.getString(1);
        String[] reply = stored.get(saga);
        if (row++ % every != 0 || reply == null) {
          continue;
        }
        for (String id : new String[]{rs.getString(3), UUID.randomUUID().toString()}) {
          raw.send(OutgoingMessage.builder(topic).id(id).key(saga)
              .payload(reply[2].getBytes(java.nio.charset.StandardCharsets.UTF_8))
              .header(SagaHeaders.SAGA_ID, saga).header(SagaHeaders.STEP, "reserve")
              .header(SagaHeaders.ATTEMPT, Integer.toString(rs.getInt(2)))
              .header(SagaHeaders.DIRECTION, SagaHeaders.FORWARD).header(SagaHeaders.COMMAND_ID, reply[0])
              .header(SagaHeaders.OUTCOME, reply[1]).build());
          sent++;
        }
      }
    }
    return sent;
  }

  /**
   * What the reply faults did, read after the run settled.
   *
   * @param dropped replies the hook dropped (work and stored reply committed, nothing published)
   * @param delayed replies the hook held back past the step timeout
   * @param duplicatesRecorded {@code DUPLICATE_REPLY} events of the coordinator (a second copy recorded, not applied)
   * @param failures each broken promise, worded for the verdict; empty when the saga absorbed every fault
   */
  public record Outcome(int dropped, int delayed, long duplicatesRecorded, List<String> failures) {
  }

  /**
   * Checks, per saga a reply fault hit: the step timed out (the fault was felt) and was asked again ({@code RESENT}
   * with the same command id), its reply applied once per attempt, the saga ended COMPLETED or COMPENSATED and never
   * by its deadline, and, when the participant's stored reply was a success, the step was compensated only after a
   * later step refused (a timeout is "ask again", never "failed").
   *
   * @param armedDrops the drops armed; each must have been taken
   * @param armedDelays the delays armed; each must have been taken
   */
  public static Outcome check(Services s, int armedDrops, int armedDelays) throws SQLException {
    List<String> failures = new ArrayList<>();
    List<String[]> hits = new ArrayList<>();
    hits.addAll(hits(s, "inventory"));
    hits.addAll(hits(s, "notification"));
    int dropped = (int) hits.stream().filter(h -> h[2].equals("drop")).count();
    int delayed = (int) hits.stream().filter(h -> h[2].equals("delay")).count();
    if (dropped != armedDrops || delayed != armedDelays) {
      failures.add("reply faults: " + armedDrops + " drops and " + armedDelays + " delays armed, " + dropped + " and "
          + delayed + " taken (the traffic ended before its step ran again)");
    }
    long duplicates;
    try (Connection c = s.db("order").getConnection()) {
      for (String[] h : hits) {
        String saga = h[0];
        String step = h[1];
        Map<String, Long> kinds = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("""
            SELECT kind, count(*) FROM converge_saga_event WHERE saga_id = ? AND step = ? GROUP BY kind""")) {
          ps.setString(1, saga);
          ps.setString(2, step);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              kinds.put(rs.getString(1), rs.getLong(2));
            }
          }
        }
        String what = h[2] + " of saga " + saga + " step '" + step + "' ";
        if (kinds.getOrDefault("TIMED_OUT", 0L) == 0 || kinds.getOrDefault("RESENT", 0L) == 0) {
          failures.add(what + "was not timed out and asked again (events " + kinds + ")");
        }
        // one reply applied per attempt (a technical failure's retry is a new attempt with a reply of its own)
        long attempts = count(c, """
            SELECT count(DISTINCT attempt) FROM converge_saga_event WHERE saga_id = ? AND step = ? AND kind = 'REPLIED'
            """, saga, step);
        if (attempts == 0 || kinds.getOrDefault("REPLIED", 0L) != attempts) {
          failures.add(what + "had " + kinds.getOrDefault("REPLIED", 0L) + " replies applied over " + attempts
              + " attempts, not one per attempt (events " + kinds + ")");
        }
        String state = state(c, saga);
        if (!"COMPLETED".equals(state) && !"COMPENSATED".equals(state)) {
          failures.add(what + ": the saga is " + state + ", not COMPLETED or COMPENSATED");
        }
        if (count(c, "SELECT count(*) FROM converge_saga_event WHERE saga_id = ? AND kind = 'DEADLINE'", saga) > 0) {
          failures.add(what + ": the saga was compensated by its deadline");
        }
        if ("COMPENSATED".equals(state) && "SUCCESS".equals(h[3]) && count(c, """
            SELECT count(*) FROM converge_saga_event WHERE saga_id = ? AND kind = 'FAILED'""", saga) == 0) {
          failures.add(what + "succeeded at its participant, but the saga compensated without a refusal");
        }
      }
      duplicates = count(c, "SELECT count(*) FROM converge_saga_event WHERE kind = 'DUPLICATE_REPLY'");
    }
    return new Outcome(dropped, delayed, duplicates, List.copyOf(failures));
  }

  /** The shots a participant's hook took: saga, step, kind, and the participant's stored outcome. */
  private static List<String[]> hits(Services s, String service) throws SQLException {
    List<String[]> hits = new ArrayList<>();
    try (Connection c = s.db(service).getConnection();
        Statement st = c.createStatement();
        ResultSet exists = st.executeQuery("SELECT to_regclass('" + ChaosReplyFaults.HITS + "') IS NOT NULL")) {
      if (!exists.next() || !exists.getBoolean(1)) {
        return hits;
      }
      try (Statement q = c.createStatement();
          ResultSet rs = q.executeQuery("SELECT h.saga_id, h.step, h.kind, b.outcome FROM "
              + ChaosReplyFaults.HITS + " h LEFT JOIN converge_saga_branch b ON b.saga_id = h.saga_id"
              + " AND b.step = h.step AND b.direction = 'forward'")) {
        while (rs.next()) {
          hits.add(new String[]{rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)});
        }
      }
    }
    return hits;
  }

  private static String state(Connection c, String saga) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT state FROM converge_saga WHERE id = ?")) {
      ps.setString(1, saga);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : "missing";
      }
    }
  }

  /** The one number {@code sql} selects, its parameters bound as text (also {@link SagaTccFaults}'). */
  static long count(Connection c, String sql, String... params) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setString(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
