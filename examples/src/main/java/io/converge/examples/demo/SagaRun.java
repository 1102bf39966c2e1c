package io.converge.examples.demo;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.OrderCreated;
import io.converge.examples.events.Topics;
import io.converge.producer.OutgoingMessage;
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
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * One run of the saga on one backend: starts the services, seeds stock and accounts, sends the order
 * and payment traffic, re-sends every seventh {@code OrderCreated} through the broker's raw client,
 * waits for every order to end, and reconciles the five databases.
 */
public final class SagaRun {

  static final long STOCK_PER_SKU = 10_000;
  static final long SCARCE_STOCK = 4;
  static final long BALANCE = 1_000_000;
  static final long POOR_BALANCE = 2_500;

  private final Backend backend;
  private final ConvergePostgres pg;
  private final Map<String, String> transport;
  private final Supplier<DuplicateInjector> injector;
  private final Duration settleTimeout;
  private final Disturbance outage;
  private final Services.Starter starter;
  private final Duration trafficSpread;

  /**
   * @param transport the properties of every service: {@code backend}'s broker ({@code converge.*}) and any other
   * @param injector opens a raw client of the backend's broker
   * @param outage the outages to play while the order traffic runs
   * @param trafficSpread how long the order traffic is spread over (zero: as fast as answered)
   */
  SagaRun(Backend backend, ConvergePostgres pg, Map<String, String> transport, Supplier<DuplicateInjector> injector,
      Duration settleTimeout, OutageRun outage, Duration trafficSpread) {
    this(backend, pg, transport, injector, settleTimeout, outage, trafficSpread, SagaServices::start);
  }

  /**
   * A run of services that {@code starter} starts (e.g. as separate processes), disturbed by {@code disturbance}
   * while the order traffic runs; the other parameters as above.
   */
  public SagaRun(Backend backend, ConvergePostgres pg, Map<String, String> transport,
      Supplier<DuplicateInjector> injector, Duration settleTimeout, Disturbance disturbance, Duration trafficSpread,
      Services.Starter starter) {
    this.backend = backend;
    this.pg = pg;
    this.transport = transport;
    this.injector = injector;
    this.settleTimeout = settleTimeout;
    this.outage = disturbance;
    this.starter = starter;
    this.trafficSpread = trafficSpread;
  }

  /**
   * Runs {@code orders} orders (and a tenth as many charges) through the services; the outages, if
   * any, during the order traffic; the duplicates, payments and reconciliation once they are over.
   */
  public Report run(String run, int orders) throws Exception {
    long started = System.nanoTime();
    try (Services services = starter.start(backend, pg, run, transport); Disturbance outages = outage) {
      seed(services);
      Http http = new Http(services.port("order"));
      outages.begin();
      OrderTraffic.Result traffic = new OrderTraffic(http, run).run(orders, trafficSpread);
      outages.awaitEnd(Duration.ofMinutes(1));
      int injected = injectDuplicates(services);
      PaymentTraffic.Result payments = new PaymentTraffic(http.port(services.port("payment")), run)
          .run(Math.max(10, orders / 10));
      boolean settled = awaitSettled(services);
      return reconcile(services, traffic, payments, http.counts(), injected, settled,
          Duration.ofNanos(System.nanoTime() - started));
    }
  }

  static void seed(Services s) throws SQLException {
    try (Connection c = s.db("inventory").getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO stock (sku, available) VALUES (?, ?)")) {
      for (String sku : OrderTraffic.SKUS) {
        ps.setString(1, sku);
        ps.setLong(2, STOCK_PER_SKU);
        ps.addBatch();
      }
      ps.setString(1, OrderTraffic.SCARCE_SKU);
      ps.setLong(2, SCARCE_STOCK);
      ps.addBatch();
      ps.executeBatch();
    }
    try (Connection c = s.db("account").getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO account (customer_id, balance_cents) VALUES (?, ?)")) {
      for (int i = 0; i < OrderTraffic.CUSTOMERS; i++) {
        String customer = String.format("c-%02d", i);
        ps.setString(1, customer);
        ps.setLong(2, OrderTraffic.POOR.contains(customer) ? POOR_BALANCE : BALANCE);
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  /** Re-sends every seventh order's {@code OrderCreated} with its original message id. */
  private int injectDuplicates(Services s) throws Exception {
    try (DuplicateInjector raw = injector.get()) {
      return redeliverOrderCreated(s, raw, 7, 1);
    }
  }

  /**
   * Re-sends the {@code OrderCreated} of every {@code every}-th order stored so far {@code times} times through
   * {@code raw}, each with its original message id (a forced redelivery); returns how many messages it sent.
   */
  public static int redeliverOrderCreated(Services s, DuplicateInjector raw, int every, int times) throws Exception {
    EventCodec codec = new EventCodec();
    String topic = s.topics().of(Topics.ORDER_CREATED);
    int sent = 0;
    try (Connection c = s.db("order").getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("""
            SELECT id, customer_id, sku, quantity, amount_cents, created_event_id FROM orders ORDER BY created_at""")) {
      int row = 0;
      while (rs.next()) {
        if (row++ % every != 0) {
          continue;
        }
        OrderCreated e = new OrderCreated(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4),
            rs.getLong(5));
        OutgoingMessage m = OutgoingMessage.builder(topic).id(rs.getString(6)).key(e.orderId())
            .payload(codec.bytes(e)).build();
        for (int k = 0; k < times; k++) {
          raw.send(m);
          sent++;
        }
      }
    }
    return sent;
  }

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
      Http.Counts client,
      int injected, boolean settled, Duration took) throws SQLException {
    DataSource orders = s.db("order");
    DataSource inventory = s.db("inventory");
    DataSource account = s.db("account");
    long created = count(orders, "SELECT count(*) FROM orders");
    long paid = count(orders, "SELECT count(*) FROM orders WHERE state = 'PAID'");
    long canceledStock = count(orders,
        "SELECT count(*) FROM orders WHERE state = 'CANCELED' AND cancel_reason LIKE 'stock:%'");
    long canceledPayment = count(orders,
        "SELECT count(*) FROM orders WHERE state = 'CANCELED' AND cancel_reason LIKE 'payment:%'");
    long open = count(orders, "SELECT count(*) FROM orders WHERE state = 'CREATED'");
    long paidCents = count(orders, "SELECT coalesce(sum(amount_cents), 0) FROM orders WHERE state = 'PAID'");
    long initialMoney = (OrderTraffic.CUSTOMERS - OrderTraffic.POOR.size()) * BALANCE
        + OrderTraffic.POOR.size() * POOR_BALANCE;
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
    check(violations, settled, "every order ended within " + settleTimeout.toSeconds() + " s (open orders: " + open
        + ", stock still held: " + held + ")");
    check(violations, created == traffic.orderIds().size() && created == traffic.keys(),
        "one order per Idempotency-Key: " + traffic.keys() + " keys, " + traffic.orderIds().size()
            + " order ids answered, "
            + created + " orders stored");
    check(violations, paid + canceledStock + canceledPayment + open == created,
        "every order is paid, canceled or open");
    check(violations, debited == paidCents,
        "money debited (" + debited + ") == sum of paid orders (" + paidCents + ")");
    check(violations, ledger == paidCents && ledgerRows == paid, "one ledger entry per paid order, same amounts");
    check(violations, sold == paidUnits && soldBySku.entrySet().stream()
        .allMatch(e -> e.getValue().equals(paidBySku.getOrDefault(e.getKey(), 0L))),
        "stock sold == units of paid orders, per SKU (" + soldBySku + " vs " + paidBySku + ")");
    check(violations, held == 0, "no stock left reserved (" + held + ")");
    check(violations, stockTotal == OrderTraffic.SKUS.size() * STOCK_PER_SKU + SCARCE_STOCK,
        "no stock created or lost");
    check(violations, released == canceledPayment, "one compensation (stock released) per order canceled for payment ("
        + released + " vs " + canceledPayment + ")");
    check(violations, notified == paid, "one notification per paid order (" + notified + " vs " + paid + ")");
    check(violations, charges == payments.charges(),
        "one charge per out_trade_no (" + charges + " for " + payments.charges() + ")");
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
    check(violations, client.gaveUp() == 0, "every HTTP request answered within " + Http.DEADLINE.toMinutes()
        + " min of retries (" + client.gaveUp() + " gave up)");
    return new Report(backend, traffic, payments, created, paid, canceledStock, canceledPayment, open, paidCents,
        debited,
        released, notified, injected, absorbed, client, parked.total(), stored5xx, took, violations);
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
  private static long countIfTable(DataSource db, String table, String sql) throws SQLException {
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
