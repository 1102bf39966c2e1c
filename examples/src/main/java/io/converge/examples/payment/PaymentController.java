package io.converge.examples.payment;

import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /charges}, {@code GET /charges/{id}}, {@code POST /charges/{id}/refunds}, and the payment provider's
 * {@code POST /charges/{id}/provider-callback} ({@link ProviderCallbacks}). A repeated request answers exactly what
 * the first one did (200 and the same body).
 */
@RestController
class PaymentController {

  private final Charges charges;
  private final ProviderCallbacks callbacks;

  PaymentController(Charges charges, ProviderCallbacks callbacks) {
    this.charges = charges;
    this.callbacks = callbacks;
  }

  /** The body of {@code POST /charges}. */
  record ChargeRequest(String merchantId, String outTradeNo, Long amountCents, String currency) {
  }

  /** The body of {@code POST /charges/{id}/refunds}. */
  record RefundRequest(String outRefundNo, Long amountCents) {
  }

  @PostMapping("/charges")
  Map<String, Object> charge(@RequestBody ChargeRequest r) {
    return charges.charge(r.merchantId(), r.outTradeNo(), r.amountCents(), r.currency());
  }

  @GetMapping("/charges/{id}")
  Map<String, Object> get(@PathVariable String id) {
    return charges.get(id);
  }

  @PostMapping("/charges/{id}/refunds")
  Map<String, Object> refund(@PathVariable String id, @RequestBody RefundRequest r) {
    return charges.refund(id, r.outRefundNo(), r.amountCents());
  }

  /** The body of {@code POST /charges/{id}/provider-callback}, the payment provider's notification. */
  record ProviderEvent(String eventId, String chargeId, String outcome) {
  }

  /** Reached only through the signed-callback filter: verified, and run once per callback. */
  @PostMapping(ProviderCallbacks.PATH)
  Map<String, Object> providerCallback(@PathVariable String id, @RequestBody ProviderEvent e) {
    return callbacks.apply(id, e.chargeId(), e.eventId(), e.outcome());
  }

  @ExceptionHandler(PaymentException.class)
  ResponseEntity<Map<String, Object>> refused(PaymentException e) {
    return ResponseEntity.status(e.status()).body(e.body());
  }
}
