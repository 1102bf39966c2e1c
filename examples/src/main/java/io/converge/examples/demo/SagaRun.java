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
import java.util.Map;
import java.util.function.Supplier;

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
  private final Reconciliation reconciliation;
  private final Disturbance outage;
  private final Services.Starter starter;
  private final Duration trafficSpread;
  /** Whether a fourth of the clients wait for the outcome ({@code Prefer: wait}): the demo's runs, not chaos'. */
  private boolean preferWait;

  /**
   * @param transport the properties of every service: {@code backend}'s broker ({@code converge.*}) and any other
   * @param injector opens a raw client of the backend's broker
   * @param outage the outages to play while the order traffic runs
   * @param trafficSpread how long the order traffic is spread over (zero: as fast as answered)
   */
  SagaRun(Backend backend, ConvergePostgres pg, Map<String, String> transport, Supplier<DuplicateInjector> injector,
      Duration settleTimeout, OutageRun outage, Duration trafficSpread) {
    this(backend, pg, transport, injector, settleTimeout, outage, trafficSpread, SagaServices::start, true);
  }

  /** As above, the services started by {@code starter} (e.g. tracing into an exporter). */
  SagaRun(Backend backend, ConvergePostgres pg, Map<String, String> transport, Supplier<DuplicateInjector> injector,
      Duration settleTimeout, OutageRun outage, Duration trafficSpread, Services.Starter starter, boolean preferWait) {
    this(backend, pg, transport, injector, settleTimeout, (Disturbance) outage, trafficSpread, starter);
    this.preferWait = preferWait;
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
    this.reconciliation = new Reconciliation(backend, settleTimeout);
    this.outage = disturbance;
    this.starter = starter;
    this.trafficSpread = trafficSpread;
  }

  /**
   * Runs {@code orders} orders (and a tenth as many charges, and the provider's signed callbacks) through the
   * services; the outages, if any, during the order traffic; the duplicates, payments, callbacks and reconciliation
   * once they are over.
   */
  public Report run(String run, int orders) throws Exception {
    long started = System.nanoTime();
    try (Services services = starter.start(backend, pg, run, transport); Disturbance outages = outage) {
      seed(services);
      Http http = new Http(services.port("order"));
      outages.begin();
      OrderTraffic.Result traffic = new OrderTraffic(http, run, preferWait).run(orders, trafficSpread);
      outages.awaitEnd(Duration.ofMinutes(1));
      int injected = injectDuplicates(services);
      int lateTries = Flow.of(transport) == Flow.ORCHESTRATION ? lateTries(services) : 0;
      PaymentTraffic.Result payments = new PaymentTraffic(http.port(services.port("payment")), run)
          .run(Math.max(10, orders / 10));
      CallbackTraffic.Result callbacks = new CallbackTraffic(http.port(services.port("payment")), run).send();
      outages.awaitLate();
      boolean settled = reconciliation.awaitSettled(services);
      return reconciliation.reconcile(services, traffic, payments, callbacks, http.counts(), injected, lateTries,
          outages.sagaTimeoutCancels(), settled, Duration.ofNanos(System.nanoTime() - started));
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

  /**
   * Re-sends every seventh order's {@code OrderCreated} (choreography), or its saga's first {@code reserve} command
   * (orchestration), with its original message id.
   */
  private int injectDuplicates(Services s) throws Exception {
    try (DuplicateInjector raw = injector.get()) {
      return Flow.of(transport) == Flow.ORCHESTRATION ? SagaCommandDuplicates.redeliverReserveCommands(s, raw, 7)
          : redeliverOrderCreated(s, raw, 7, 1);
    }
  }

  /**
   * The orchestrated flow's late Tries ({@link LateTries}): the debit's Cancel, then its Try, for two orders canceled
   * for stock; returns how many Tries were sent.
   */
  private int lateTries(Services s) throws Exception {
    try (DuplicateInjector raw = injector.get()) {
      return LateTries.send(s, raw, 2);
    }
  }

  /**
   * A forced redelivery in {@code flow}: the {@code OrderCreated} of every {@code every}-th order
   * ({@link #redeliverOrderCreated}) in the choreographed flow, the first {@code reserve} command of every
   * {@code every}-th saga with its original message id in the orchestrated one, {@code times} times each; returns how
   * many messages it sent.
   */
  public static int redeliver(Flow flow, Services s, DuplicateInjector raw, int every, int times) throws Exception {
    if (flow == Flow.CHOREOGRAPHY) {
      return redeliverOrderCreated(s, raw, every, times);
    }
    int sent = 0;
    for (int k = 0; k < times; k++) {
      sent += SagaCommandDuplicates.redeliverReserveCommands(s, raw, every);
    }
    return sent;
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

  /** How this run waits for the saga to settle and reconciles its databases. */
  Reconciliation reconciliation() {
    return reconciliation;
  }
}
