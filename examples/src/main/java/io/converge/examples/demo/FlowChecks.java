package io.converge.examples.demo;

import io.converge.saga.SagaHeaders;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The reconciliation's checks of the two flows, beyond the books: every answer to a client that waited
 * ({@code Prefer: wait}) agrees with its order's end, and, in the orchestrated flow (the order service's
 * {@code converge_saga} table), every saga ended as its order did: none left {@code RUNNING} or
 * {@code COMPENSATING}, none {@code STOPPED} or {@code COMPENSATION_FAILED}, no saga ticket; the TCC debit's
 * frozen balances: none without an order, none left at the end; and every compensation ran once, counted from the
 * participants' own tables ({@link #COMPENSATIONS_ONCE}).
 */
public final class FlowChecks {

  /** The wording of the invariant that every saga ended (the start of its violation's text). */
  public static final String SAGAS_ENDED = "FAILED: every saga ended";
  /** The wording of the invariant that every compensation ran once (the start of its violation's text). */
  public static final String COMPENSATIONS_ONCE = "FAILED: compensations run once";

  private FlowChecks() {
  }

  /** The violated invariants, each worded as the reconciliation words them. */
  static List<String> violations(Services s, OrderTraffic.Result traffic) throws SQLException {
    List<String> violations = new ArrayList<>();
    DataSource orders = s.db("order");
    Map<String, String> ends = new HashMap<>();
    try (Connection c = orders.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT id, state, coalesce(cancel_reason, '') FROM orders")) {
      while (rs.next()) {
        ends.put(rs.getString(1), rs.getString(2) + " " + rs.getString(3));
      }
    }
    List<String> disagree = new ArrayList<>();
    traffic.waited().forEach((id, status) -> {
      String end = ends.getOrDefault(id, "missing");
      boolean agrees = switch (status) {
        case 201 -> end.startsWith("PAID");
        case 402 -> end.startsWith("CANCELED payment:");
        case 409 -> end.startsWith("CANCELED stock:");
        default -> status == 202;
      };
      if (!agrees) {
        disagree.add(id + " answered " + status + ", ended " + end);
      }
    });
    if (!disagree.isEmpty()) {
      violations.add("FAILED: every answer after Prefer: wait agrees with the order's end (" + disagree + ")");
    }
    if (Reconciliation.countIfTable(orders, "converge_saga", "SELECT count(*) FROM converge_saga") == 0) {
      return violations; // the choreographed flow: no saga (an orchestrated one has a saga per order)
    }
    Map<String, Long> states = new HashMap<>();
    long ticketsOpen;
    try (Connection c = orders.getConnection(); Statement st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT state, count(*) FROM converge_saga GROUP BY state")) {
        while (rs.next()) {
          states.put(rs.getString(1), rs.getLong(2));
        }
      }
      try (ResultSet rs = st.executeQuery("SELECT count(*) FROM converge_saga_ticket")) {
        rs.next();
        ticketsOpen = rs.getLong(1);
      }
    }
    long paid = ends.values().stream().filter(e -> e.startsWith("PAID")).count();
    long canceled = ends.values().stream().filter(e -> e.startsWith("CANCELED")).count();
    long completed = states.getOrDefault("COMPLETED", 0L);
    long compensated = states.getOrDefault("COMPENSATED", 0L);
    if (completed + compensated != ends.size() || ticketsOpen != 0) {
      violations.add(SAGAS_ENDED + ", none left RUNNING/COMPENSATING, none STOPPED/COMPENSATION_FAILED,"
          + " no saga ticket (sagas by state " + states + " for " + ends.size() + " orders, " + ticketsOpen
          + " tickets)");
    }
    violations.addAll(compensationsOnce(s));
    if (completed != paid || compensated != canceled) {
      violations.add("FAILED: one COMPLETED saga per paid order, one COMPENSATED per canceled order (" + completed
          + " vs " + paid + ", " + compensated + " vs " + canceled + ")");
    }
    frozen(violations, s.db("account"), ends.keySet());
    Report.Tcc tcc = Reconciliation.tcc(s.db("account"));
    if (tcc.tried() + tcc.emptyRollbacks() > 0 // the debit is a TCC branch: each Try ended in one Confirm or Cancel
        && (tcc.confirmed() != paid || tcc.confirmed() + tcc.cancelled() != tcc.tried())) {
      violations.add("FAILED: one TCC Confirm per paid order, every Try confirmed or cancelled (" + tcc + " for "
          + paid + " paid orders)");
    }
    return violations;
  }

  /**
   * Every compensation ran once per saga and step, counted from the participants' barrier rows
   * ({@code converge_saga_branch}) and their business tables, not from logs: a COMPENSATED saga's step whose forward
   * work succeeded at inventory or account was undone (one {@code compensate} row with outcome {@code SUCCESS}), a
   * COMPLETED saga's never; inventory's undos released one reservation each; the coordinator applied at most one
   * successful compensation reply per saga and step (a second copy is a {@code DUPLICATE_REPLY}).
   */
  static List<String> compensationsOnce(Services s) throws SQLException {
    Map<String, String> sagas = new HashMap<>();
    Map<String, Long> applied = new HashMap<>();
    try (Connection c = s.db("order").getConnection(); Statement st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT id, state FROM converge_saga")) {
        while (rs.next()) {
          sagas.put(rs.getString(1), rs.getString(2));
        }
      }
      // an applied compensation reply's payload starts with its outcome ("SUCCESS ...")
      try (ResultSet rs = st.executeQuery("""
          SELECT saga_id || ' ' || step, count(*) FROM converge_saga_event
           WHERE kind = 'COMPENSATION_REPLIED' AND payload LIKE 'SUCCESS%' GROUP BY saga_id, step""")) {
        while (rs.next()) {
          applied.put(rs.getString(1), rs.getLong(2));
        }
      }
    }
    List<String> wrong = new ArrayList<>();
    applied.forEach((k, n) -> {
      if (n > 1) {
        wrong.add(k + " compensation applied " + n + " times");
      }
    });
    long undone = 0;
    for (String participant : List.of("inventory", "account")) {
      if (Reconciliation.countIfTable(s.db(participant), "converge_saga_branch",
          "SELECT count(*) FROM converge_saga_branch") == 0) {
        continue; // not a saga participant in this run (or nothing reached it)
      }
      Map<String, String> forward = new HashMap<>();
      Map<String, String> undo = new HashMap<>();
      try (Connection c = s.db(participant).getConnection();
          PreparedStatement ps = c.prepareStatement("""
              SELECT saga_id, step, direction, outcome FROM converge_saga_branch WHERE participant = ?""")) {
        ps.setString(1, participant);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            (SagaHeaders.FORWARD.equals(rs.getString(3)) ? forward : undo)
                .put(rs.getString(1) + " " + rs.getString(2), rs.getString(4));
          }
        }
      }
      for (Map.Entry<String, String> f : forward.entrySet()) {
        String state = sagas.get(f.getKey().substring(0, f.getKey().indexOf(' ')));
        boolean ranUndo = "SUCCESS".equals(undo.get(f.getKey()));
        if ("COMPLETED".equals(state) && ranUndo) {
          wrong.add(participant + " " + f.getKey() + " undone, but the saga COMPLETED");
        } else if ("COMPENSATED".equals(state) && "SUCCESS".equals(f.getValue()) && !ranUndo) {
          wrong.add(participant + " " + f.getKey() + " succeeded, the saga COMPENSATED, no undo ran");
        }
      }
      if (participant.equals("inventory")) {
        undone = undo.values().stream().filter("SUCCESS"::equals).count();
      }
    }
    long released = Reconciliation.countIfTable(s.db("inventory"), "reservation",
        "SELECT count(*) FROM reservation WHERE state = 'RELEASED'");
    if (released != undone) {
      wrong.add(released + " reservations released by " + undone + " inventory undos");
    }
    return wrong.isEmpty() ? List.of()
        : List.of(COMPENSATIONS_ONCE + " per saga and step, counted from the participants' tables (" + wrong + ")");
  }

  /**
   * The TCC debit's books (account's {@code account_freeze} and {@code frozen_cents}): no frozen balance without an
   * order (a hanging Try that froze money after its Cancel would leave one), and none left at the end (every Try
   * confirmed or cancelled). Both hold trivially with {@code examples.saga.debit=saga}, which freezes nothing.
   */
  private static void frozen(List<String> violations, DataSource account, Set<String> orderIds) throws SQLException {
    List<String> noOrder = new ArrayList<>();
    long rows = 0;
    long frozenCents;
    try (Connection c = account.getConnection(); Statement st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT order_id FROM account_freeze")) {
        while (rs.next()) {
          rows++;
          if (!orderIds.contains(rs.getString(1))) {
            noOrder.add(rs.getString(1));
          }
        }
      }
      try (ResultSet rs = st.executeQuery("SELECT coalesce(sum(frozen_cents), 0) FROM account")) {
        rs.next();
        frozenCents = rs.getLong(1);
      }
    }
    if (!noOrder.isEmpty()) {
      violations.add("FAILED: frozen balances with no order = 0 (" + noOrder.size() + ": " + noOrder + ")");
    }
    if (rows != 0 || frozenCents != 0) {
      violations.add("FAILED: frozen balances at the end = 0 (" + frozenCents + " cents frozen, " + rows
          + " freeze rows)");
    }
  }
}
