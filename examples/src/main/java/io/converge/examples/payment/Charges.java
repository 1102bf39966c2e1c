package io.converge.examples.payment;

import io.converge.consumer.IllegalTransitionException;
import io.converge.consumer.StaleStateException;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.DataClassRowMapper;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
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
  private static final String CHARGE = "SELECT id, merchant_id, out_trade_no, amount_cents, currency, state,"
      + " failure_reason FROM charge WHERE ";
  private static final String REFUND = "SELECT id, charge_id, out_refund_no, amount_cents, state FROM refund WHERE ";
  private static final RowMapper<Charge> CHARGE_ROW = new DataClassRowMapper<>(Charge.class);
  private static final RowMapper<Refund> REFUND_ROW = new DataClassRowMapper<>(Refund.class);

  private final JdbcTemplate jdbc;
  private final TransactionTemplate tx;

  Charges(JdbcTemplate jdbc, PlatformTransactionManager tm) {
    this.jdbc = jdbc;
    this.tx = new TransactionTemplate(tm);
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
    Charge first = charge("merchant_id = ? AND out_trade_no = ?", merchantId, outTradeNo).orElseThrow();
    if (inserted == null || inserted == 0) {
      if (first.amountCents() != amountCents || !first.currency().equals(currency)) {
        log.warn("charge {}: out_trade_no {} of merchant {} reused with {} {} (first: {} {})", first.id(),
            outTradeNo,
            merchantId, amountCents, currency, first.amountCents(), first.currency());
        throw new PaymentException(400, "out-trade-no-reused", "out_trade_no " + outTradeNo + " was first used for "
            + first.amountCents() + " " + first.currency() + ", not " + amountCents + " " + currency,
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
    return view(charge("id = ?", id).orElseThrow());
  }

  /**
   * Refunds a captured charge in full, or returns the refund {@code (chargeId, outRefundNo)} already names.
   *
   * @throws PaymentException 404 unknown charge; 400 invalid input, partial amount, or the refund number
   *     reused with another amount; 409 when the charge is not refundable (not captured, or already
   *     refunded under another refund number)
   */
  public Map<String, Object> refund(String chargeId, String outRefundNo, Long amountCents) {
    Charge charge = charge("id = ?", chargeId)
        .orElseThrow(() -> new PaymentException(404, "unknown-charge", "No charge " + chargeId, null));
    if (blank(outRefundNo) || outRefundNo.length() > 64 || amountCents == null) {
      throw new PaymentException(400, "invalid-refund",
          "outRefundNo (at most 64 characters) and amountCents are required,"
              + " but were " + outRefundNo + ", " + amountCents,
          null);
    }
    var existing = refund("charge_id = ? AND out_refund_no = ?", chargeId, outRefundNo);
    if (existing.isPresent()) {
      return sameRefund(existing.get(), amountCents);
    }
    if (amountCents != charge.amountCents()) {
      throw new PaymentException(400, "partial-refund",
          "Refunds are of the whole charge " + chargeId + ": amountCents must be "
              + charge.amountCents() + ", but was " + amountCents,
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
          view(charge("id = ?", chargeId).orElseThrow()));
    }
    if (inserted == null || inserted == 0) {
      return sameRefund(refund("charge_id = ? AND out_refund_no = ?", chargeId, outRefundNo).orElseThrow(),
          amountCents);
    }
    tx.executeWithoutResult(s -> {
      transition(chargeId, ChargeState.REFUNDED);
      jdbc.update(REFUND_DONE, "SUCCEEDED", id);
    });
    log.info("charge {} refunded ({} {})", chargeId, amountCents, charge.currency());
    return view(refund("id = ?", id).orElseThrow());
  }

  /** The charge {@code id} as the API shows it. */
  public Map<String, Object> get(String id) {
    return view(
        charge("id = ?", id).orElseThrow(() -> new PaymentException(404, "unknown-charge", "No charge " + id, null)));
  }

  private Map<String, Object> sameRefund(Refund r, long amountCents) {
    if (r.amountCents() != amountCents) {
      throw new PaymentException(400, "out-refund-no-reused",
          "out_refund_no " + r.outRefundNo() + " was first used for "
              + r.amountCents() + ", not " + amountCents,
          view(r));
    }
    return view(r);
  }

  private Optional<Charge> charge(String where, Object... args) {
    return jdbc.query(CHARGE + where, CHARGE_ROW, args).stream().findFirst();
  }

  private Optional<Refund> refund(String where, Object... args) {
    return jdbc.query(REFUND + where, REFUND_ROW, args).stream().findFirst();
  }

  private void move(String id, ChargeState to) {
    tx.executeWithoutResult(s -> transition(id, to));
  }

  private void transition(String id, ChargeState to) {
    jdbc.execute((ConnectionCallback<Object>) c -> ChargeState.MACHINE.transition(c, id, to));
  }

  static Map<String, Object> view(Charge c) {
    return Map.of("id", c.id(), "merchantId", c.merchantId(), "outTradeNo", c.outTradeNo(),
        "amountCents", c.amountCents(), "currency", c.currency(), "state", c.state().name(),
        "failureReason", c.failureReason() == null ? "" : c.failureReason());
  }

  static Map<String, Object> view(Refund r) {
    return Map.of("id", r.id(), "chargeId", r.chargeId(), "outRefundNo", r.outRefundNo(),
        "amountCents", r.amountCents(), "state", r.state());
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
