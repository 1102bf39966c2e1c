package io.converge.examples.demo;

import io.converge.examples.events.ChaosReplyFaults;
import io.converge.producer.OutgoingMessage;
import io.converge.saga.SagaHeaders;
import io.converge.saga.tcc.TccHeaders;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The orchestrated flow's TCC faults, for {@code converge chaos} (issue 33, item 4), armed in the coordinator's
 * database for the order service's {@link ChaosReplyFaults} hook (which must be on): one debit Try held back in
 * transit past the saga's global timeout ({@code examples.saga.deadline}), so that its Cancel arrives first, then
 * delivered; one Confirm and one Cancel delivered a second time, with their id and with a new one. The check, after
 * the run, reads the coordinator's timeline and the account's barrier and books, never logs.
 */
public final class SagaTccFaults {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private SagaTccFaults() {
  }

  /** Arms one held Try and one copied Confirm and Cancel, each taken by the next such command of the saga. */
  public static void arm(Services s) throws SQLException {
    try (Connection c = s.db("order").getConnection()) {
      try (Statement st = c.createStatement()) {
        st.execute(ChaosReplyFaults.DDL);
      }
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + ChaosReplyFaults.ARMED
          + " (kind, step) VALUES ('hold', 'try'), ('copy', 'confirm'), ('copy', 'cancel')")) {
        ps.executeUpdate();
      }
    }
  }

  /**
   * After the traffic: per held Try, waits (at most {@code timeout}: the saga's global timeout and a margin) until its
   * Cancel was applied at the account, then delivers the held messages with their own ids and waits for the barrier's
   * refusal; then delivers each copied Confirm and Cancel again, once with its id (the consumer's dedup absorbs it) and
   * once with a new id (the barrier must answer it {@code DUPLICATE}), and waits until the coordinator recorded the
   * second answer. Returns how many messages it sent; what did not happen in time, the check reports.
   */
  public static Released release(Services s, DuplicateInjector raw, Duration timeout) throws Exception {
    int sent = 0;
    List<String> copyIds = new ArrayList<>();
    for (List<OutgoingMessage> tries : kept(s, "hold").values()) {
      OutgoingMessage first = tries.get(0);
      if (!await(s, "account", barrier(first, "cancel", "SELECT 1"), timeout)) {
        continue; // no Cancel: delivering the Try now would not test what comes after it (the check reports it)
      }
      for (OutgoingMessage m : tries) {
        raw.send(m);
        sent++;
      }
      await(s, "account", barrier(first, "try", "SELECT refusals > 0"), WAIT);
    }
    // read now: the Cancel copied is, in practice, the held Try's saga's, published at its global timeout
    for (List<OutgoingMessage> copies : kept(s, "copy").values()) {
      for (OutgoingMessage m : copies) {
        String operation = m.headers().get(TccHeaders.OPERATION);
        if (!await(s, "account", barrier(m, operation, "SELECT 1"), WAIT)) {
          continue;
        }
        raw.send(m);
        OutgoingMessage.Builder copy = OutgoingMessage.builder(m.topic()).id(UUID.randomUUID().toString())
            .key(m.key()).tenant(m.tenant()).payload(m.payload());
        m.headers().forEach(copy::header);
        OutgoingMessage second = copy.build();
        raw.send(second);
        copyIds.add(second.id());
        sent += 2;
        await(s, "order", new String[]{"SELECT 1 FROM converge_saga_event WHERE saga_id = ? AND step = ?"
            + " AND kind = 'DUPLICATE_REPLY'", m.headers().get(SagaHeaders.SAGA_ID),
            m.headers().get(SagaHeaders.STEP)}, WAIT);
      }
    }
    return new Released(sent, List.copyOf(copyIds));
  }

  /**
   * What {@link #release} sent.
   *
   * @param sent messages sent (the held Tries, each copy twice)
   * @param copyIds the new ids of the copied Confirms and Cancels delivered again (the ones the barrier must answer)
   */
  public record Released(int sent, List<String> copyIds) {

    /** Nothing released. */
    public static final Released NONE = new Released(0, List.of());
  }

  /** Sagas whose debit Try the hook held past the global timeout: their orders end canceled by it, on purpose. */
  public static long heldSagas(Services s) throws SQLException {
    try (Connection c = s.db("order").getConnection();
        Statement st = c.createStatement();
        ResultSet exists = st.executeQuery("SELECT to_regclass('" + ChaosReplyFaults.HITS + "') IS NOT NULL")) {
      if (!exists.next() || !exists.getBoolean(1)) {
        return 0;
      }
      return count(c, "SELECT count(DISTINCT saga_id) FROM " + ChaosReplyFaults.HITS + " WHERE kind = 'hold'");
    }
  }

  /** The messages the hook kept for {@code purpose} ({@code hold} or {@code copy}), by saga, in their order. */
  private static Map<String, List<OutgoingMessage>> kept(Services s, String purpose) throws SQLException {
    Map<String, List<OutgoingMessage>> kept = new LinkedHashMap<>();
    try (Connection c = s.db("order").getConnection();
        Statement st = c.createStatement();
        ResultSet exists = st.executeQuery("SELECT to_regclass('" + ChaosReplyFaults.KEPT + "') IS NOT NULL")) {
      if (!exists.next() || !exists.getBoolean(1)) {
        return kept;
      }
      try (PreparedStatement q = c.prepareStatement("SELECT saga_id, topic, id, msg_key, tenant, names, vals, payload"
          + " FROM " + ChaosReplyFaults.KEPT + " WHERE purpose = ? ORDER BY seq")) {
        q.setString(1, purpose);
        try (ResultSet rs = q.executeQuery()) {
          while (rs.next()) {
            OutgoingMessage.Builder b = OutgoingMessage.builder(rs.getString(2)).id(rs.getString(3))
                .key(rs.getString(4)).payload(rs.getBytes(8));
            if (rs.getString(5) != null) {
              b.tenant(rs.getString(5));
            }
            String[] names = (String[]) rs.getArray(6).getArray();
            String[] values = (String[]) rs.getArray(7).getArray();
            for (int i = 0; i < names.length; i++) {
              b.header(names[i], values[i]);
            }
            kept.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(b.build());
          }
        }
      }
    }
    return kept;
  }

  /** A query on the account's barrier row of {@code m}'s branch and {@code operation}, and its parameters. */
  private static String[] barrier(OutgoingMessage m, String operation, String select) {
    return new String[]{select + " FROM converge_tcc_barrier WHERE global_id = ? AND branch_id = ? AND operation = ?",
        m.headers().get(TccHeaders.GLOBAL_ID), m.headers().get(TccHeaders.BRANCH_ID), operation};
  }

  /**
   * What the TCC faults did, read after the run settled.
   *
   * @param held Tries held back past the global timeout (one per saga)
   * @param hangingRefused refusals of those Tries by the account's barrier (their rows' {@code refusals})
   * @param copied Confirms and Cancels delivered a second time (each with its id and with a new one)
   * @param failures each broken promise, worded for the verdict; empty when the flow absorbed every fault
   */
  public record Outcome(int held, long hangingRefused, int copied, List<String> failures) {
  }

  /**
   * Checks, per held Try: the saga reached its global timeout ({@code DEADLINE}) and ended {@code COMPENSATED}, its
   * order {@code CANCELED}; the Cancel was an empty rollback; the Try, delivered after it, was refused as hanging
   * (and its refusal recorded by the coordinator as a {@code LATE_REPLY}), froze nothing and debited nothing. Per
   * copied Confirm or Cancel: the coordinator recorded the second answer as a {@code DUPLICATE_REPLY} (not applied),
   * and the account's books hold one effect: one ledger entry for a confirmed order, nothing frozen for either.
   *
   * @param armed whether the shots were armed: each must have been taken
   */
  public static Outcome check(Services s, boolean armed, Released released) throws SQLException {
    List<String> failures = new ArrayList<>();
    List<String[]> hits = new ArrayList<>();
    try (Connection c = s.db("order").getConnection();
        Statement st = c.createStatement();
        ResultSet exists = st.executeQuery("SELECT to_regclass('" + ChaosReplyFaults.HITS + "') IS NOT NULL")) {
      if (exists.next() && exists.getBoolean(1)) {
        try (Statement q = c.createStatement();
            ResultSet rs = q.executeQuery("SELECT h.saga_id, h.step, h.kind, k.names, k.vals FROM "
                + ChaosReplyFaults.HITS + " h JOIN " + ChaosReplyFaults.KEPT + " k ON k.saga_id = h.saga_id"
                + " AND k.purpose = h.kind AND k.seq = (SELECT min(seq) FROM " + ChaosReplyFaults.KEPT
                + " WHERE saga_id = h.saga_id AND purpose = h.kind) ORDER BY h.at")) {
          while (rs.next()) {
            String[] names = (String[]) rs.getArray(4).getArray();
            String[] values = (String[]) rs.getArray(5).getArray();
            String operation = null;
            for (int i = 0; i < names.length; i++) {
              operation = names[i].equals(TccHeaders.OPERATION) ? values[i] : operation;
            }
            hits.add(new String[]{rs.getString(1), rs.getString(2), rs.getString(3), operation});
          }
        }
      }
    }
    int held = (int) hits.stream().filter(h -> h[2].equals("hold")).count();
    int copied = (int) hits.stream().filter(h -> h[2].equals("copy")).count();
    if (armed && (held != 1 || copied != 2)) {
      failures.add("TCC faults: 1 held Try and 2 copies (Confirm, Cancel) armed, " + held + " and " + copied
          + " taken (no saga reached them)");
    }
    if (released.copyIds().size() != copied) {
      failures.add("TCC faults: " + copied + " Confirm/Cancel copies taken, " + released.copyIds().size()
          + " delivered again (its original never reached the barrier in time)");
    }
    long refused = 0;
    try (Connection order = s.db("order").getConnection(); Connection account = s.db("account").getConnection()) {
      for (String id : released.copyIds()) {
        // the copy with a new id passed the consumer's dedup, so its handler (the barrier) ran and answered it
        if (count(account, "SELECT count(*) FROM converge_dedup WHERE message_id = ?", id) != 1) {
          failures.add("the copy " + id + " of a Confirm or Cancel (a new id) was not processed by the account");
        }
      }
      for (String[] h : hits) {
        String saga = h[0];
        String what = h[2] + " of the " + h[3] + " of saga " + saga + " ";
        if (h[2].equals("hold")) {
          if (count(order, "SELECT count(*) FROM converge_saga_event WHERE saga_id = ? AND kind = 'DEADLINE'",
              saga) == 0 || !"COMPENSATED".equals(value(order, "SELECT state FROM converge_saga WHERE id = ?", saga))
              || !"CANCELED".equals(value(order, "SELECT state FROM orders WHERE id = ?", saga))) {
            failures.add(what + "did not end by the global timeout: saga "
                + value(order, "SELECT state FROM converge_saga WHERE id = ?", saga) + ", order "
                + value(order, "SELECT state FROM orders WHERE id = ?", saga));
          }
          if (!"EMPTY_ROLLBACK".equals(value(account, "SELECT outcome FROM converge_tcc_barrier WHERE global_id = ?"
              + " AND branch_id = 'debit' AND operation = 'cancel'", saga))) {
            failures.add(what + ": its Cancel was not an empty rollback");
          }
          long n = count(account, "SELECT coalesce(sum(refusals), 0) FROM converge_tcc_barrier WHERE global_id = ?"
              + " AND branch_id = 'debit' AND operation = 'try' AND origin = 'cancel-first'", saga);
          refused += n;
          if (n == 0) {
            failures.add(what + "was not refused as hanging (delivered after its Cancel)");
          }
          if (count(order, "SELECT count(*) FROM converge_saga_event WHERE saga_id = ? AND step = 'debit'"
              + " AND kind = 'LATE_REPLY'", saga) == 0) {
            failures.add(what + ": the coordinator recorded no late answer to it");
          }
          if (count(account, "SELECT count(*) FROM account_freeze WHERE order_id = ?", saga)
              + count(account, "SELECT count(*) FROM account_entry WHERE order_id = ?", saga) > 0) {
            failures.add(what + "froze or debited money after its Cancel");
          }
        } else {
          if (count(order, "SELECT count(*) FROM converge_saga_event WHERE saga_id = ? AND step = ?"
              + " AND kind = 'DUPLICATE_REPLY'", saga, h[1]) == 0) {
            failures.add(what + "delivered again: the coordinator recorded no second answer (DUPLICATE_REPLY)");
          }
          long entries = count(account, "SELECT count(*) FROM account_entry WHERE order_id = ?", saga);
          long frozen = count(account, "SELECT count(*) FROM account_freeze WHERE order_id = ?", saga);
          if (entries != ("confirm".equals(h[3]) ? 1 : 0) || frozen != 0) {
            failures.add(what + "delivered again: " + entries + " ledger entries, " + frozen
                + " freezes left for its order (one effect expected)");
          }
        }
      }
    }
    return new Outcome(held, refused, copied, List.copyOf(failures));
  }

  private static boolean await(Services s, String service, String[] query, Duration wait) throws SQLException,
      InterruptedException {
    long until = System.nanoTime() + wait.toNanos();
    do {
      try (Connection c = s.db(service).getConnection();
          PreparedStatement ps = c.prepareStatement(query[0])) {
        for (int i = 1; i < query.length; i++) {
          ps.setString(i, query[i]);
        }
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && rs.getBoolean(1)) {
            return true;
          }
        }
      }
      Thread.sleep(200); // the poll's period, not a synchronisation
    } while (System.nanoTime() < until);
    return false;
  }

  private static String value(Connection c, String sql, String param) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, param);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : "missing";
      }
    }
  }

  private static long count(Connection c, String sql, String... params) throws SQLException {
    return SagaReplyFaults.count(c, sql, params);
  }
}
