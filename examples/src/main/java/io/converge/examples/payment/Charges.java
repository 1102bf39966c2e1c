package io.converge.examples.payment;

import io.converge.consumer.IllegalTransitionException;
import io.converge.consumer.StaleStateException;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Charges and refunds. The business keys are the idempotency (article 2.2): a charge is created by
 * {@code INSERT … ON CONFLICT (merchant_id, out_trade_no) DO NOTHING}, so a retried request returns the
 * first charge, and one with the same {@code out_trade_no} but another amount is refused with the
 * first charge in the answer. Every state move is one short transaction and one compare-and-swap of
 * {@link ChargeState#MACHINE}; the intermediate states (Authorizing, Capturing, Refunding) are
 * committed before the acquirer is called, so a crash leaves a visible, resumable state.
 */
@Service
public class Charges {

  private static final Logger log = LoggerFactory.getLogger(Charges.class);

  /** The simulated acquirer declines authorisations above this amount. */
  static final long AUTHORIZATION_LIMIT_CENTS = 500_000;

  private static final String INSERT_CHARGE = """
      INSERT INTO charge (id, merchant_id, out_trade_no, amount_cents, currency, state)
      VALUES (?, ?, ?, ?, ?, 'CREATED')
      ON CONFLICT (merchant_id, out_trade_no) DO NOTHING""";
  private static final String INSERT_REFUND = """
      INSERT INTO refund (id, charge_id, out_refund_no, amount_cents, state)
      VALUES (?, ?, ?, ?, 'PENDING')
      ON CONFLICT (charge_id, out_refund_no) DO NOTHING""";
  private static final String FAIL_REASON = "UPDATE charge SET failure_reason = ? WHERE id = ?";
  private static final String REFUND_DONE = "UPDATE refund SET state = ? WHERE id = ? AND state = 'PENDING'";

  private final JdbcTemplate jdbc;
  private final TransactionTemplate tx;
  private final ChargeRepository charges;
  private final RefundRepository refunds;

  Charges(JdbcTemplate jdbc, PlatformTransactionManager tm, ChargeRepository charges, RefundRepository refunds) {
    this.jdbc = jdbc;
    this.tx = new TransactionTemplate(tm);
    this.charges = charges;
    this.refunds = refunds;
  }

  /**
   * Creates and processes a charge, or returns the one {@code (merchantId, outTradeNo)} already names.
   *
   * @throws PaymentException 400 when the input is invalid or the business key was used with another
   *     amount or currency (the answer carries the first charge)
   */
  public Map<String, Object> charge(String merchantId, String outTradeNo, Long amountCents, String currency) {
    if (blank(merchantId) || blank(outTradeNo) || outTradeNo.length() > 64 || amountCents == null || amountCents < 1
        || currency == null || !currency.matches("[A-Z]{3}")) {
      throw new PaymentException(400, "invalid-charge",
          "merchantId, outTradeNo (at most 64 characters), amountCents >= 1"
              + " and a 3-letter currency are required, but were " + merchantId + ", " + outTradeNo + ", " + amountCents
              + ", "
              + currency,
          null);
    }
    String id = "ch-" + UUID.randomUUID();
    Integer inserted = tx.execute(s -> jdbc.update(INSERT_CHARGE, id, merchantId, outTradeNo, amountCents, currency));
    Charge first = charges.findByMerchantIdAndOutTradeNo(merchantId, outTradeNo).orElseThrow();
    if (inserted == null || inserted == 0) {
      if (first.getAmountCents() != amountCents || !first.getCurrency().equals(currency)) {
        log.warn("charge {}: out_trade_no {} of merchant {} reused with {} {} (first: {} {})", first.getId(),
            outTradeNo,
            merchantId, amountCents, currency, first.getAmountCents(), first.getCurrency());
        throw new PaymentException(400, "out-trade-no-reused", "out_trade_no " + outTradeNo + " was first used for "
            + first.getAmountCents() + " " + first.getCurrency() + ", not " + amountCents + " " + currency,
            view(first));
      }
      return view(first);
    }
    move(id, ChargeState.AUTHORIZING);
    if (amountCents > AUTHORIZATION_LIMIT_CENTS) {
      tx.executeWithoutResult(s -> {
        transition(id, ChargeState.FAILED);
        jdbc.update(FAIL_REASON, "declined: above the authorisation limit", id);
      });
    } else {
      move(id, ChargeState.AUTHORIZED);
      move(id, ChargeState.CAPTURING);
      move(id, ChargeState.CAPTURED);
    }
    return view(charges.findById(id).orElseThrow());
  }

  /**
   * Refunds a captured charge in full, or returns the refund {@code (chargeId, outRefundNo)} already names.
   *
   * @throws PaymentException 404 unknown charge; 400 invalid input, partial amount, or the refund number
   *     reused with another amount; 409 when the charge is not refundable (not captured, or already
   *     refunded under another refund number)
   */
  public Map<String, Object> refund(String chargeId, String outRefundNo, Long amountCents) {
    Charge charge = charges.findById(chargeId)
        .orElseThrow(() -> new PaymentException(404, "unknown-charge", "No charge " + chargeId, null));
    if (blank(outRefundNo) || outRefundNo.length() > 64 || amountCents == null) {
      throw new PaymentException(400, "invalid-refund",
          "outRefundNo (at most 64 characters) and amountCents are required,"
              + " but were " + outRefundNo + ", " + amountCents,
          null);
    }
    var existing = refunds.findByChargeIdAndOutRefundNo(chargeId, outRefundNo);
    if (existing.isPresent()) {
      return sameRefund(existing.get(), amountCents);
    }
    if (amountCents != charge.getAmountCents()) {
      throw new PaymentException(400, "partial-refund",
          "Refunds are of the whole charge " + chargeId + ": amountCents must be "
              + charge.getAmountCents() + ", but was " + amountCents,
          null);
    }
    String id = "rf-" + UUID.randomUUID();
    Integer inserted;
    try {
      inserted = tx.execute(s -> {
        int n = jdbc.update(INSERT_REFUND, id, chargeId, outRefundNo, amountCents);
        if (n == 1) {
          transition(chargeId, ChargeState.REFUNDING); // refused unless CAPTURED: rolls the refund row back
        }
        return n;
      });
    } catch (IllegalTransitionException | StaleStateException e) {
      throw new PaymentException(409, "not-refundable", "Charge " + chargeId + " cannot be refunded: " + e.getMessage(),
          view(charges.findById(chargeId).orElseThrow()));
    }
    if (inserted == null || inserted == 0) {
      return sameRefund(refunds.findByChargeIdAndOutRefundNo(chargeId, outRefundNo).orElseThrow(), amountCents);
    }
    tx.executeWithoutResult(s -> {
      transition(chargeId, ChargeState.REFUNDED);
      jdbc.update(REFUND_DONE, "SUCCEEDED", id);
    });
    log.info("charge {} refunded ({} {})", chargeId, amountCents, charge.getCurrency());
    return view(refunds.findById(id).orElseThrow());
  }

  /** The charge {@code id} as the API shows it. */
  public Map<String, Object> get(String id) {
    return view(
        charges.findById(id).orElseThrow(() -> new PaymentException(404, "unknown-charge", "No charge " + id, null)));
  }

  private Map<String, Object> sameRefund(Refund r, long amountCents) {
    if (r.getAmountCents() != amountCents) {
      throw new PaymentException(400, "out-refund-no-reused",
          "out_refund_no " + r.getOutRefundNo() + " was first used for "
              + r.getAmountCents() + ", not " + amountCents,
          view(r));
    }
    return view(r);
  }

  private void move(String id, ChargeState to) {
    tx.executeWithoutResult(s -> transition(id, to));
  }

  private void transition(String id, ChargeState to) {
    jdbc.execute((ConnectionCallback<Object>) c -> ChargeState.MACHINE.transition(c, id, to));
  }

  static Map<String, Object> view(Charge c) {
    return Map.of("id", c.getId(), "merchantId", c.getMerchantId(), "outTradeNo", c.getOutTradeNo(),
        "amountCents", c.getAmountCents(), "currency", c.getCurrency(), "state", c.getState().name(),
        "failureReason", c.getFailureReason() == null ? "" : c.getFailureReason());
  }

  static Map<String, Object> view(Refund r) {
    return Map.of("id", r.getId(), "chargeId", r.getChargeId(), "outRefundNo", r.getOutRefundNo(),
        "amountCents", r.getAmountCents(), "state", r.getState());
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
