package io.converge.examples.demo;

import io.converge.broker.DevPlatform;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * The saga as a load for {@code converge bench}: the five services of the demo on one backend
 * ({@link SagaServices}, seeded as {@link SagaRun} seeds them), orders placed one at a time by the
 * demo's clients ({@link OrderTraffic}: retries, bursts and mismatched bodies included) and awaited
 * until PAID or CANCELED, and at the end the demo's reconciliation ({@link Report}) of every order
 * placed. One poller thread reads the states of the awaited orders every {@value #POLL_MS} ms, so a
 * settlement is seen at most that much late. {@link #placeAndSettle} is thread-safe.
 */
public final class SagaLoad implements AutoCloseable {

  /** How often the awaited orders' states are read. */
  public static final int POLL_MS = 5;

  private final SagaServices services;
  private final SagaRun saga;
  private final OrderTraffic traffic;
  private final Http http;
  private final DataSource orders;
  private final AtomicInteger next = new AtomicInteger();
  private final Set<String> ids = ConcurrentHashMap.newKeySet();
  private final Map<String, CompletableFuture<String>> awaited = new ConcurrentHashMap<>();
  private final Thread poller;
  private volatile boolean closed;
  private volatile Exception pollFailure;

  private SagaLoad(SagaServices services, SagaRun saga, String run) {
    this.services = services;
    this.saga = saga;
    this.http = new Http(services.port("order"));
    this.traffic = new OrderTraffic(http, run);
    this.orders = services.db("order");
    this.poller = new Thread(this::poll, "saga-load-poller-" + run);
    poller.setDaemon(true);
    poller.start();
  }

  /**
   * Starts the services on {@code backend} on {@code platform}'s servers (Pulsar's child JVM started if
   * needed) and seeds stock and accounts; {@code settleTimeout} bounds the final wait of {@link #reconcile}.
   */
  public static SagaLoad start(DevPlatform platform, Backend backend, Duration settleTimeout) throws Exception {
    String run = "load-" + backend.mode() + "-" + UUID.randomUUID().toString().substring(0, 6);
    Map<String, String> transport = Transport.properties(platform, backend, run);
    SagaServices services = SagaServices.start(backend, platform.postgres(), run, transport);
    try {
      SagaRun.seed(services);
      SagaRun saga = new SagaRun(backend, platform.postgres(), transport, null, settleTimeout, null, Duration.ZERO);
      return new SagaLoad(services, saga, run);
    } catch (Exception | Error e) {
      services.close();
      throw e;
    }
  }

  /**
   * Places the next order ({@code POST /orders}, as the demo's clients do) and waits until it is PAID or
   * CANCELED.
   *
   * @return its final state
   * @throws IllegalStateException when the order service refused the order or it did not settle in {@code timeout}
   */
  public String placeAndSettle(Duration timeout) throws Exception {
    int i = next.getAndIncrement();
    String id = traffic.place(i);
    if (id == null) {
      throw new IllegalStateException("order " + i + " was not placed: " + traffic.result(i, Set.of()).anomalies());
    }
    ids.add(id);
    CompletableFuture<String> settled = awaited.computeIfAbsent(id, k -> new CompletableFuture<>());
    try {
      return settled.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      Exception polling = pollFailure;
      throw new IllegalStateException("order " + id + " not PAID or CANCELED within " + timeout
          + (polling == null ? "" : " (reading its state failed: " + polling + ")"), e);
    } finally {
      awaited.remove(id);
    }
  }

  /** How many orders were placed so far. */
  public int placed() {
    return next.get();
  }

  /**
   * Waits until every order placed has ended and reconciles the five databases with the demo's
   * invariants (money, stock, compensations, notifications, one order per Idempotency-Key, nothing
   * parked).
   *
   * @return the violated invariants, empty when the saga is consistent; {@link #describe} prints the figures
   */
  public List<String> reconcile() throws Exception {
    boolean settled = saga.reconciliation().awaitSettled(services);
    PaymentTraffic.Result noPayments = new PaymentTraffic.Result(0, 0, 0, 0, 0, 0, List.of());
    Report report = saga.reconciliation().reconcile(services, traffic.result(next.get(), ids), noPayments,
        CallbackTraffic.Result.NONE, http.counts(), 0, 0, 0, settled, Duration.ZERO);
    last = report;
    return report.violations();
  }

  private volatile Report last;

  /** The last reconciliation's figures, printed as the demo prints them (nothing before {@link #reconcile}). */
  public void describe(java.io.PrintStream out) {
    Report r = last;
    if (r != null) {
      r.print(out);
    }
  }

  private void poll() {
    Connection c = null;
    while (!closed) {
      try {
        if (!awaited.isEmpty()) {
          if (c == null) {
            c = orders.getConnection();
          }
          try (PreparedStatement ps = c.prepareStatement(
              "SELECT id, state FROM orders WHERE id = ANY (?) AND state <> 'CREATED'")) {
            Array wanted = c.createArrayOf("varchar", awaited.keySet().toArray());
            ps.setArray(1, wanted);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                CompletableFuture<String> f = awaited.get(rs.getString(1));
                if (f != null) {
                  f.complete(rs.getString(2));
                }
              }
            }
          }
        }
      } catch (Exception e) {
        pollFailure = e;
        closeQuietly(c);
        c = null;
      }
      try {
        Thread.sleep(POLL_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    closeQuietly(c);
  }

  private static void closeQuietly(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (Exception e) {
        // the connection is given up either way
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    closed = true;
    poller.interrupt();
    poller.join(5_000);
    services.close();
  }
}
