package io.converge.examples.order;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RequestAttribute;
import io.converge.consumer.http.IdempotencyFilter;

/**
 * {@code POST /orders}, {@code GET /orders/{id}} and {@code GET /orders?idempotency-key=KEY}. The POST is guarded by
 * Converge's {@code Idempotency-Key} filter (configured in {@code order.properties}): a retried request with the
 * same key gets the first response, and never a second order. A client whose answer was lost (the filter's
 * {@code 409 answer-lost}: the order committed, its response did not reach the client) finds its order by its key.
 *
 * <p>{@code Prefer: wait=N} ({@link PreferWait}) makes {@code POST /orders} wait up to N seconds (at most 10) for the
 * order's outcome, after its transaction committed and without holding a connection (the order is read again every
 * {@value #POLL_MS} ms, each read one auto-commit query): 201 paid, 402 payment refused, 409 out of stock,
 * or 202 with the order's {@code Location} when it has not ended yet. The Idempotency-Key filter stores that answer as
 * it stores any: a retry of the key gets the first answer (a 202 too, with its {@code Location}: the order's status
 * is then read there, not by posting again).
 */
@RestController
class OrderController {

  private static final Logger log = LoggerFactory.getLogger(OrderController.class);

  /** How often a waiting {@code POST /orders} reads its order again. */
  static final long POLL_MS = 50;

  private final OrderService service;
  private final OrderRepository orders;
  private final JdbcTemplate jdbc;

  OrderController(OrderService service, OrderRepository orders, JdbcTemplate jdbc) {
    this.service = service;
    this.orders = orders;
    this.jdbc = jdbc;
  }

  /** The body of {@code POST /orders}. */
  record PlaceOrder(String customerId, String sku, Integer quantity, Long amountCents) {
  }

  @PostMapping("/orders")
  ResponseEntity<Map<String, Object>> place(@RequestBody PlaceOrder body,
      @RequestHeader(name = "Idempotency-Key", required = false) String idempotencyKey,
      @RequestHeader(name = "X-Tenant-Id", required = false) String tenant,
      @RequestHeader(name = "Prefer", required = false) List<String> prefer,
      @RequestAttribute(name = IdempotencyFilter.KEY_ATTRIBUTE, required = false) String filteredKey)
      throws InterruptedException {
    if (body == null || blank(body.customerId()) || blank(body.sku()) || body.quantity() == null || body.quantity() < 1
        || body.amountCents() == null || body.amountCents() < 1) {
      return ResponseEntity.badRequest().body(Map.of("error", "invalid-order",
          "detail", "customerId, sku, quantity >= 1 and amountCents >= 1 are required, but were " + body));
    }
    // the key as the filter keys it ("abc" and abc are one key), so that a look-up by key finds the order
    PurchaseOrder o = service.place(body.customerId(), body.sku(), body.quantity(), body.amountCents(),
        filteredKey != null ? filteredKey : idempotencyKey, tenant);
    URI location = URI.create("/orders/" + o.getId());
    Optional<Duration> wait = PreferWait.parse(prefer);
    if (wait.isEmpty()) {
      return ResponseEntity.created(location).body(view(o));
    }
    End end = awaitEnd(o, wait.get());
    return ResponseEntity.status(PreferWait.status(end.state(), end.cancelReason())).location(location)
        .body(view(o, end.state(), end.cancelReason()));
  }

  /** An order's state and cancel reason as read. */
  private record End(OrderState state, String cancelReason) {
  }

  /**
   * The order's state once PAID or CANCELED, or as it is after {@code wait}. Each read is one auto-commit query
   * ({@link JdbcTemplate}, no Spring transaction: the Idempotency-Key filter marks its claim in every transaction of
   * the request, and a read-only one cannot), so no connection is held between reads.
   */
  private End awaitEnd(PurchaseOrder placed, Duration wait) throws InterruptedException {
    long deadline = System.nanoTime() + wait.toNanos();
    End end = new End(placed.getState(), placed.getCancelReason());
    while (end.state() == OrderState.CREATED && System.nanoTime() < deadline) {
      Thread.sleep(Math.min(POLL_MS, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
      try {
        end = jdbc.query("SELECT state, cancel_reason FROM orders WHERE id = ?",
            rs -> rs.next() ? new End(OrderState.valueOf(rs.getString(1)), rs.getString(2)) : null, placed.getId());
      } catch (DataAccessResourceFailureException | TransientDataAccessException | RecoverableDataAccessException e) {
        // the order committed; only its outcome cannot be read now: 202 and its Location, never a 500 stored for
        // the key (the client reads the outcome at the Location once the database is back)
        log.warn("order {}: its outcome could not be read while waiting ({}); answered as not finished",
            placed.getId(), e.toString());
        return end;
      }
    }
    return end;
  }

  @GetMapping("/orders/{id}")
  ResponseEntity<Map<String, Object>> get(@PathVariable String id) {
    return orders.findById(id).map(o -> ResponseEntity.ok(view(o)))
        .orElseGet(
            () -> ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", "unknown-order", "orderId", id)));
  }

  /** The order created by {@code POST /orders} with this Idempotency-Key, for the tenant of {@code X-Tenant-Id}. */
  @GetMapping(path = "/orders", params = "idempotency-key")
  ResponseEntity<Map<String, Object>> byIdempotencyKey(@RequestParam("idempotency-key") String idempotencyKey,
      @RequestHeader(name = "X-Tenant-Id", required = false) String tenant) {
    if (blank(tenant) || blank(idempotencyKey)) {
      return ResponseEntity.badRequest().body(Map.of("error", "invalid-lookup",
          "detail", "the X-Tenant-Id header and the idempotency-key parameter are required"));
    }
    return orders.findFirstByTenantAndIdempotencyKeyOrderByCreatedAtAsc(tenant, idempotencyKey)
        .map(o -> ResponseEntity.ok(view(o))).orElseGet(() -> ResponseEntity.status(HttpStatus.NOT_FOUND)
            .body(Map.of("error", "unknown-order", "idempotencyKey", idempotencyKey)));
  }

  private static Map<String, Object> view(PurchaseOrder o) {
    return view(o, o.getState(), o.getCancelReason());
  }

  private static Map<String, Object> view(PurchaseOrder o, OrderState state, String cancelReason) {
    return Map.of("orderId", o.getId(), "customerId", o.getCustomerId(), "sku", o.getSku(), "quantity", o.getQuantity(),
        "amountCents", o.getAmountCents(), "state", state.name(), "cancelReason",
        cancelReason == null ? "" : cancelReason);
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
