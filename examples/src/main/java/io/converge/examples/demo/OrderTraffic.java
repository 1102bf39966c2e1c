package io.converge.examples.demo;

import io.converge.consumer.http.IdempotencyProblem;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Clients of {@code POST /orders}: every order has its own {@code Idempotency-Key}; some requests are
 * retried with the same key (as after a timeout), some sent three times at once (a double click), some
 * re-sent with the same key and another body (a client bug). What the clients saw is counted.
 */
final class OrderTraffic {

  static final List<String> SKUS = List.of("sku-apple", "sku-pear", "sku-plum", "sku-fig");
  static final String SCARCE_SKU = "sku-scarce";
  static final int CUSTOMERS = 20;
  /** The last two customers can pay for about two orders: later orders of theirs are compensated. */
  static final Set<String> POOR = Set.of("c-18", "c-19");

  /**
   * What the clients saw; {@code waited}: the status answered to each order placed with {@code Prefer: wait}, by
   * order id.
   */
  record Result(int keys, Set<String> orderIds, int retries, int retriesReplayed, int concurrentBursts,
      int inProgress409, int mismatch422, List<String> anomalies, int answerLostLookups, Map<String, Integer> waited) {
  }

  /** How long the clients that wait for the outcome ask to wait ({@code Prefer: wait}). */
  static final int WAIT_SECONDS = 10;

  private final Http http;
  private final String run;
  private final AtomicInteger retries = new AtomicInteger();
  private final AtomicInteger replayed = new AtomicInteger();
  private final AtomicInteger bursts = new AtomicInteger();
  private final AtomicInteger conflicts = new AtomicInteger();
  private final AtomicInteger mismatches = new AtomicInteger();
  private final AtomicInteger lookups = new AtomicInteger();
  private final List<String> anomalies = java.util.Collections.synchronizedList(new ArrayList<>());
  private final Map<String, Integer> waited = new java.util.concurrent.ConcurrentHashMap<>();

  private final boolean preferWait;

  /** Clients of which none waits for the outcome (as {@code converge chaos} and the bench drive them). */
  OrderTraffic(Http http, String run) {
    this(http, run, false);
  }

  /** Clients of which, with {@code preferWait}, every fourth waits for the outcome ({@code Prefer: wait}). */
  OrderTraffic(Http http, String run, boolean preferWait) {
    this.http = http;
    this.run = run;
    this.preferWait = preferWait;
  }

  /** Places {@code orders} orders from 8 client threads, as fast as they are answered. */
  Result run(int orders) throws Exception {
    return run(orders, Duration.ZERO);
  }

  /**
   * Places {@code orders} orders from 8 client threads, order {@code i} not before {@code i / orders}
   * of {@code spread} has passed (so that the traffic lasts through an outage).
   */
  Result run(int orders, Duration spread) throws Exception {
    ExecutorService clients = Executors.newFixedThreadPool(8);
    List<Future<String>> placed = new ArrayList<>();
    long start = System.nanoTime();
    try {
      for (int i = 0; i < orders; i++) {
        int n = i;
        long notBefore = start + spread.toNanos() * i / orders;
        placed.add(clients.submit(() -> {
          long wait = notBefore - System.nanoTime();
          if (wait > 0) {
            Thread.sleep(wait / 1_000_000);
          }
          return place(n);
        }));
      }
      Set<String> ids = new HashSet<>();
      for (Future<String> f : placed) {
        String id = f.get();
        if (id != null) {
          ids.add(id);
        }
      }
      return result(orders, ids);
    } finally {
      clients.shutdownNow();
    }
  }

  static Map<String, Object> body(int i) {
    String customer = String.format("c-%02d", i % CUSTOMERS);
    String sku = i % 13 == 5 ? SCARCE_SKU : SKUS.get(i % SKUS.size());
    int quantity = 1 + i % 3;
    return Map.of("customerId", customer, "sku", sku, "quantity", quantity, "amountCents", quantity * 1000L + i % 7);
  }

  /** What the clients saw, for {@code keys} orders placed one by one with {@link #place(int)}. */
  Result result(int keys, Set<String> orderIds) {
    return new Result(keys, Set.copyOf(orderIds), retries.get(), replayed.get(), bursts.get(), conflicts.get(),
        mismatches.get(), List.copyOf(anomalies), lookups.get(), Map.copyOf(waited));
  }

  /**
   * Places order {@code i} as the clients of {@link #run(int)} do; its id, or null after an anomaly. With
   * {@code preferWait}, every fourth client waits for the outcome ({@code Prefer: wait}): 201 paid, 402, 409 or 202, each recorded to be reconciled
   * with the order's end.
   */
  String place(int i) throws Exception {
    String key = run + "-order-" + i;
    Map<String, Object> body = body(i);
    boolean burst = i % 25 == 7;
    // every fourth client, a poor customer's among them (c-18: a refused debit, the 402); a burst's requests do not wait
    boolean waits = preferWait && i % 4 == 2 && !burst;
    Http.Reply first;
    if (burst) {
      first = burst(key, body);
    } else if (waits) {
      first = http.postPreferWait("/orders", body, key, WAIT_SECONDS);
    } else {
      first = http.post("/orders", body, key);
    }
    String orderId;
    if (answerLost(first)) {
      // its order committed, its answer was lost (a crash): the client finds the order by its key
      orderId = lookUp(i, key);
      if (orderId == null) {
        return null;
      }
    } else if (waits ? !WAITED.contains(first.status()) || first.field("orderId") == null : first.status() != 201) {
      anomalies.add("order " + i + ": POST /orders answered " + first.status() + " " + first.body());
      return null;
    } else {
      orderId = first.field("orderId");
      if (waits) {
        waited.put(orderId, first.status());
      }
    }
    if (i % 10 == 3) {
      retries.incrementAndGet();
      Http.Reply again = http.postNo409Retry("/orders", body, key);
      if (again.status() == 409 && inProgress(again)) {
        again = http.post("/orders", body, key); // still in progress: retried as the clients do
      }
      // the first answer again, a waited one (202 included) too
      if (again.status() == first.status() && orderId.equals(again.field("orderId")) && again.replayed()) {
        replayed.incrementAndGet();
      } else if (answerLost(again) && again.replayed() && orderId.equals(lookUp(i, key))) {
        // a crash (e.g. PostgreSQL's) took the answer while the order committed: the filter answers every retry
        // 409 answer-lost for good and runs nothing again; the order found by its key is the first answer's
        replayed.incrementAndGet();
      } else {
        anomalies.add("order " + i + ": the retry with key " + key + " answered " + again.status() + " " + again.body()
            + (again.replayed() ? " (replayed)" : " (not marked as a replay)") + ", the first " + orderId);
      }
    }
    if (i % 50 == 11) {
      Map<String, Object> other = new java.util.HashMap<>(body);
      other.put("amountCents", ((Long) body.get("amountCents")) + 1);
      Http.Reply r = http.post("/orders", other, key);
      if (r.status() == 422) {
        mismatches.incrementAndGet();
      } else {
        anomalies.add("order " + i + ": key " + key + " with another body answered " + r.status() + ", not 422");
      }
    }
    return orderId;
  }

  /**
   * The id of the order created with {@code key} ({@code GET /orders?idempotency-key=}), after the filter's
   * {@code 409 answer-lost}; null, with an anomaly, when there is none.
   */
  private String lookUp(int i, String key) throws InterruptedException {
    Http.Reply found = http.getAsTenant("/orders?idempotency-key="
        + java.net.URLEncoder.encode(key, java.nio.charset.StandardCharsets.UTF_8));
    if (found.status() == 200 && found.field("orderId") != null) {
      lookups.incrementAndGet();
      return found.field("orderId");
    }
    anomalies.add("order " + i + ": answer-lost, and its order was not found by its key " + key + ": "
        + found.status() + " " + found.body());
    return null;
  }

  /** The answers to a client that waits for the outcome: paid, payment refused, out of stock, not ended yet. */
  private static final Set<Integer> WAITED = Set.of(201, 402, 409, 202);

  /** The Idempotency-Key filter's 409 while the first request of the key runs. */
  private static boolean inProgress(Http.Reply r) {
    return r.status() == 409 && IdempotencyProblem.IN_PROGRESS.type().equals(r.field("type"));
  }

  /** The Idempotency-Key filter's final answer for a request carried out whose answer was lost with a crash. */
  static boolean answerLost(Http.Reply r) {
    return r.status() == 409 && IdempotencyProblem.ANSWER_LOST.type().equals(r.field("type"));
  }

  /** Three identical requests at once: one runs, the others get its answer or 409; then a last retry. */
  private Http.Reply burst(String key, Map<String, Object> body) throws Exception {
    bursts.incrementAndGet();
    ExecutorService three = Executors.newFixedThreadPool(3);
    try {
      List<Callable<Http.Reply>> calls = List.of(() -> http.postNo409Retry("/orders", body, key),
          () -> http.postNo409Retry("/orders", body, key), () -> http.postNo409Retry("/orders", body, key));
      Set<String> ids = new HashSet<>();
      for (Future<Http.Reply> f : three.invokeAll(calls)) {
        Http.Reply r = f.get();
        if (r.status() == 409) {
          conflicts.incrementAndGet();
        } else if (r.status() == 201) {
          ids.add(r.field("orderId"));
        } else {
          anomalies.add("burst " + key + ": answered " + r.status() + " " + r.body());
        }
      }
      Http.Reply last = http.post("/orders", body, key);
      if (!answerLost(last)) { // else its order is looked up by its key
        ids.add(last.field("orderId"));
      }
      if (ids.size() > 1 || ids.isEmpty() && !answerLost(last)) {
        anomalies.add("burst " + key + ": several orders " + ids);
      }
      return last;
    } finally {
      three.shutdownNow();
    }
  }
}
