package io.converge.examples.order;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.http.HttpStatus;
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
 * {@value #POLL_MS} ms, each read a short transaction of its own): 201 paid, 402 payment refused, 409 out of stock,
 * or 202 with the order's {@code Location} when it has not ended yet. The Idempotency-Key filter stores that answer as
 * it stores any: a retry of the key gets the first answer (a 202 too, with its {@code Location}: the order's status
 * is then read there, not by posting again).
 */
@RestController
class OrderController {

  /** How often a waiting {@code POST /orders} reads its order again. */
  static final long POLL_MS = 50;

  private final OrderService service;
  private final OrderRepository orders;

  OrderController(OrderService service, OrderRepository orders) {
    this.service = service;
    this.orders = orders;
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
    PurchaseOrder ended = awaitEnd(o, wait.get());
    return ResponseEntity.status(PreferWait.status(ended.getState(), ended.getCancelReason())).location(location)
        .body(view(ended));
  }

  /** The order once PAID or CANCELED, or as it is after {@code wait}; read outside any transaction held open. */
  private PurchaseOrder awaitEnd(PurchaseOrder placed, Duration wait) throws InterruptedException {
    long deadline = System.nanoTime() + wait.toNanos();
    PurchaseOrder o = placed;
    while (o.getState() == OrderState.CREATED && System.nanoTime() < deadline) {
      Thread.sleep(Math.min(POLL_MS, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
      o = orders.findById(placed.getId()).orElse(o);
    }
    return o;
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
    return Map.of("orderId", o.getId(), "customerId", o.getCustomerId(), "sku", o.getSku(), "quantity", o.getQuantity(),
        "amountCents", o.getAmountCents(), "state", o.getState().name(),
        "cancelReason", o.getCancelReason() == null ? "" : o.getCancelReason());
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
