package io.converge.examples.demo;

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
import javax.sql.DataSource;

/**
 * The end of a {@link SagaRun}: waits until the saga has settled, then reconciles the five databases with the
 * demo's invariants (money, stock, compensations, notifications, charges, one order per Idempotency-Key, nothing
 * parked) and what the clients saw.
 *
 * @param backend the backend the saga ran on
 * @param settleTimeout how long the saga may take to settle after its traffic
 */
record Reconciliation(Backend backend, Duration settleTimeout) {

  /**
   * Waits until no order is open, no stock is held and every paid order was notified; gives up early
   * when a message is parked (dead letter or ticket) and nothing has moved for 20 s, since a parked
   * message waits for a person.
   */
  boolean awaitSettled(Services s) throws Exception {
    long deadline = System.nanoTime() + settleTimeout.toNanos();
    List<Long> last = List.of();
    long lastChange = System.nanoTime();
    while (System.nanoTime() < deadline) {
      long open = count(s.db("order"), "SELECT count(*) FROM orders WHERE state = 'CREATED'");
      long held = count(s.db("inventory"), "SELECT count(*) FROM reservation WHERE state = 'RESERVED'");
      long paid = count(s.db("order"), "SELECT count(*) FROM orders WHERE state = 'PAID'");
      long notified = count(s.db("notification"), "SELECT count(*) FROM notification");
      if (open == 0 && held == 0 && paid == notified) {
        Thread.sleep(1000); // late duplicates still in flight must change nothing: give them a moment
        return true;
      }
      List<Long> now = List.of(open, held, paid, notified);
      if (!now.equals(last)) {
        last = now;
        lastChange = System.nanoTime();
      } else if (System.nanoTime() - lastChange > STUCK.toNanos() && parked(s).total() > 0) {
        return false;
      }
      Thread.sleep(200);
    }
    return false;
  }

  private static final Duration STUCK = Duration.ofSeconds(20);

  /** Dead letters and tickets of the consuming services. */
  private record Parked(long deadLetters, long tickets) {

    long total() {
      return deadLetters + tickets;
    }
  }

  private static Parked parked(Services s) throws SQLException {
    long dlq = 0;
    long tickets = 0;
    for (String service : List.of("order", "inventory", "account", "notification")) {
      dlq += countIfTable(s.db(service), "converge_dlq", "SELECT count(*) FROM converge_dlq");
      tickets += countIfTable(s.db(service), "converge_ticket", "SELECT count(*) FROM converge_ticket");
    }
    return new Parked(dlq, tickets);
  }

  Report reconcile(Services s, OrderTraffic.Result traffic, PaymentTraffic.Result payments,
      CallbackTraffic.Result callbacks, Http.Counts client,
      int injected, int lateTries, long timeoutCancels, boolean settled, Duration took) throws SQLException {
    DataSource orders = s.db("order");
    DataSource inventory = s.db("inventory");
    DataSource account = s.db("account");
    long created = count(orders, "SELECT count(*) FROM orders");
    long paid = count(orders, "SELECT count(*) FROM orders WHERE state = 'PAID'");
    long canceledStock = count(orders,
        "SELECT count(*) FROM orders WHERE state = 'CANCELED' AND cancel_reason LIKE 'stock:%'");
    long canceledPayment = count(orders,
        "SELECT count(*) FROM orders WHERE state = 'CANCELED' AND cancel_reason LIKE 'payment:%'");
    // the orchestrated saga's global timeout (examples.saga.deadline): compensated without a refusal (OrderSaga)
    long canceledTimeout = count(orders,
        "SELECT count(*) FROM orders WHERE state = 'CANCELED' AND cancel_reason LIKE 'saga:%'");
    long open = count(orders, "SELECT count(*) FROM orders WHERE state = 'CREATED'");
    long paidCents = count(orders, "SELECT coalesce(sum(amount_cents), 0) FROM orders WHERE state = 'PAID'");
    long initialMoney = (OrderTraffic.CUSTOMERS - OrderTraffic.POOR.size()) * SagaRun.BALANCE
        + OrderTraffic.POOR.size() * SagaRun.POOR_BALANCE;
    long debited = initialMoney - count(account, "SELECT coalesce(sum(balance_cents), 0) FROM account");
    long ledger = count(account, "SELECT coalesce(sum(amount_cents), 0) FROM account_entry");
    long ledgerRows = count(account, "SELECT count(*) FROM account_entry");
    long released = count(inventory, "SELECT count(*) FROM reservation WHERE state = 'RELEASED'");
    long held = count(inventory, "SELECT coalesce(sum(reserved), 0) FROM stock");
    long sold = count(inventory, "SELECT coalesce(sum(sold), 0) FROM stock");
    long paidUnits = count(orders, "SELECT coalesce(sum(quantity), 0) FROM orders WHERE state = 'PAID'");
    long stockTotal = count(inventory, "SELECT coalesce(sum(available + reserved + sold), 0) FROM stock");
    long notified = count(s.db("notification"), "SELECT count(*) FROM notification");
    Map<String, Long> soldBySku = perSku(inventory, "SELECT sku, sold FROM stock");
    Map<String, Long> paidBySku = perSku(orders,
        "SELECT sku, sum(quantity) FROM orders WHERE state = 'PAID' GROUP BY sku");
    long charges = count(s.db("payment"), "SELECT count(*) FROM charge");
    long refundRows = count(s.db("payment"), "SELECT count(*) FROM refund");
    long refundedCharges = count(s.db("payment"), "SELECT count(*) FROM charge WHERE state = 'REFUNDED'");

    List<String> violations = new ArrayList<>(traffic.anomalies());
    violations.addAll(payments.anomalies());
    violations.addAll(callbacks.anomalies());
    if (callbacks.chargeId() != null) {
      checkCallbacks(violations, s.db("payment"), callbacks.chargeId());
    }
    check(violations, settled, "every order ended within " + settleTimeout.toSeconds() + " s (open orders: " + open
        + ", stock still held: " + held + ")");
    check(violations, created == traffic.orderIds().size() && created == traffic.keys(),
        "one order per Idempotency-Key: " + traffic.keys() + " keys, " + traffic.orderIds().size()
            + " order ids answered, "
            + created + " orders stored");
    check(violations, paid + canceledStock + canceledPayment + canceledTimeout + open == created,
        "every order is paid, canceled or open");
    check(violations, canceledTimeout == timeoutCancels, "orders canceled by the saga's global timeout: only those the"
        + " run caused on purpose (" + canceledTimeout + " vs " + timeoutCancels + ")");
    check(violations, debited == paidCents,
        "money debited (" + debited + ") == sum of paid orders (" + paidCents + ")");
    check(violations, ledger == paidCents && ledgerRows == paid, "one ledger entry per paid order, same amounts");
    check(violations, sold == paidUnits && soldBySku.entrySet().stream()
        .allMatch(e -> e.getValue().equals(paidBySku.getOrDefault(e.getKey(), 0L))),
        "stock sold == units of paid orders, per SKU (" + soldBySku + " vs " + paidBySku + ")");
    check(violations, held == 0, "no stock left reserved (" + held + ")");
    check(violations, stockTotal == OrderTraffic.SKUS.size() * SagaRun.STOCK_PER_SKU + SagaRun.SCARCE_STOCK,
        "no stock created or lost");
    // an order canceled by the saga's timeout released its stock if its reservation ran before the timeout
    check(violations, released >= canceledPayment && released <= canceledPayment + canceledTimeout,
        "one compensation (stock released) per order canceled for payment, at most one per order canceled by the"
            + " saga's timeout (" + released + " vs " + canceledPayment + " + " + canceledTimeout + ")");
    check(violations, notified == paid, "one notification per paid order (" + notified + " vs " + paid + ")");
    long requestedCharges = payments.charges() + (callbacks.chargeId() == null ? 0 : 1); // the callbacks' charge
    check(violations, charges == requestedCharges,
        "one charge per out_trade_no (" + charges + " for " + requestedCharges + ")");
    check(violations, refundRows == payments.refunds() && refundedCharges == payments.refunds(),
        "one refund per refunded charge (" + refundRows + " refunds, " + refundedCharges + " refunded charges, "
            + payments.refunds() + " requested)");
    long absorbed = s.consumerCount("duplicates");
    check(violations, absorbed >= injected, "every injected duplicate absorbed (" + absorbed + " of " + injected + ")");
    check(violations, canceledPayment > 0 && canceledStock > 0 && paid > 0,
        "the run exercised payment, stock refusal and compensation");
    Parked parked = parked(s);
    long stored5xx = countIfTable(orders, "converge_idempotency_key",
        "SELECT count(*) FROM converge_idempotency_key WHERE response_status >= 500");
    check(violations, parked.total() == 0,
        "no dead letter and no ticket (" + parked.deadLetters() + " in converge_dlq, "
            + parked.tickets() + " in converge_ticket)");
    check(violations, stored5xx == 0, "no 5xx stored as an Idempotency-Key's answer (" + stored5xx + ")");
    violations.addAll(FlowChecks.violations(s, traffic));
    Report.Tcc tcc = tcc(account);
    check(violations, tcc.emptyRollbacks() >= lateTries && tcc.hangingRefused() >= lateTries,
        "every late Try (its Cancel first) refused as hanging after an empty rollback (" + lateTries + " sent, "
            + tcc.emptyRollbacks() + " empty rollbacks, " + tcc.hangingRefused() + " refused)");
    check(violations, client.gaveUp() == 0, "every HTTP request answered within " + Http.DEADLINE.toMinutes()
        + " min of retries (" + client.gaveUp() + " gave up)");
    return new Report(backend, traffic, payments, callbacks, created, paid, canceledStock, canceledPayment,
        canceledTimeout,
        open,
        paidCents,
        debited,
        released, notified, injected, absorbed, client, parked.total(), stored5xx, took, tcc, violations);
  }

  /** The account's TCC barrier rows of the debit, counted by what they record. */
  static Report.Tcc tcc(DataSource account) throws SQLException {
    String table = "converge_tcc_barrier";
    String where = "SELECT count(*) FROM converge_tcc_barrier WHERE branch_id = 'debit' AND ";
    return new Report.Tcc(countIfTable(account, table, where + "operation = 'try' AND origin = 'try'"),
        countIfTable(account, table, where + "operation = 'confirm'"),
        countIfTable(account, table, where + "operation = 'cancel' AND outcome = 'RAN'"),
        countIfTable(account, table, where + "operation = 'cancel' AND outcome = 'EMPTY_ROLLBACK'"),
        countIfTable(account, table, "SELECT coalesce(sum(refusals), 0) FROM converge_tcc_barrier"
            + " WHERE branch_id = 'debit' AND operation = 'try'"));
  }

  /** Only the valid callback was applied, once: not the forged nor the stale one, not the copy again. */
  private static void checkCallbacks(List<String> violations, DataSource payment, String chargeId)
      throws SQLException {
    long rows;
    String status;
    try (Connection c = payment.getConnection();
        PreparedStatement ps = c
            .prepareStatement("SELECT (SELECT count(*) FROM provider_callback WHERE charge_id = ?), "
                + "(SELECT provider_status FROM charge WHERE id = ?)")) {
      ps.setString(1, chargeId);
      ps.setString(2, chargeId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        rows = rs.getLong(1);
        status = rs.getString(2);
      }
    }
    check(violations, rows == 1 && "CONFIRMED".equals(status), "only the valid provider callback applied, once ("
        + rows + " applied to charge " + chargeId + ", provider status " + status + ")");
  }

  private static void check(List<String> violations, boolean holds, String invariant) {
    if (!holds) {
      violations.add("FAILED: " + invariant);
    }
  }

  private static long count(DataSource db, String sql) throws SQLException {
    try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** {@code sql}'s count, or 0 when {@code table} does not exist in the data source's schema. */
  static long countIfTable(DataSource db, String table, String sql) throws SQLException {
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (!rs.getBoolean(1)) {
          return 0;
        }
      }
    }
    return count(db, sql);
  }

  private static Map<String, Long> perSku(DataSource db, String sql) throws SQLException {
    Map<String, Long> m = new HashMap<>();
    try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        if (rs.getLong(2) != 0) {
          m.put(rs.getString(1), rs.getLong(2));
        }
      }
    }
    return m;
  }
}
