package io.converge.examples.account;

import io.converge.consumer.BusinessException;
import io.converge.core.tracing.Tracing;
import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.SagaOrder;
import io.converge.examples.events.Orchestrated;
import io.converge.examples.events.Rows;
import io.converge.producer.TxnProducer;
import io.converge.saga.tcc.TccBarrier;
import io.converge.saga.tcc.TccParticipant;
import io.converge.saga.tcc.micrometer.MicrometerTccMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Account's part of the orchestrated saga with the debit as a TCC branch ({@code examples.saga.debit=tcc}, the
 * default): the {@link TccParticipant} {@code account}, branch {@value #BRANCH}, whose global id is the order id.
 * Every call runs through converge-saga's {@link TccBarrier} (table {@code converge_tcc_barrier}) with its reply, in
 * one transaction of the account service:
 *
 * <ul>
 *   <li>Try freezes the amount: one conditional update moves it from {@code balance_cents} to {@code frozen_cents}
 *       ({@code balance >= amount}: never overdrawn) and one {@code account_freeze} row records it; insufficient
 *       funds is a refusal (nothing stored: the saga gives the stock back and cancels the order);</li>
 *   <li>Confirm debits the frozen amount: the freeze row deleted, {@code frozen_cents} lowered, the order's ledger
 *       entry written;</li>
 *   <li>Cancel unfreezes: the freeze row deleted, the amount back from {@code frozen_cents} to
 *       {@code balance_cents}.</li>
 * </ul>
 *
 * The barrier answers what the work cannot: a copy of a call gets the stored answer, a Cancel that arrives before its
 * Try is an empty rollback and that Try, arriving later, is refused as hanging (it would freeze money no order
 * holds), a Confirm after a Cancel (or the reverse) is an anomaly.
 */
@Configuration(proxyBeanMethods = false)
@Orchestrated
@ConditionalOnProperty(name = AccountTccParticipant.PROPERTY, havingValue = "tcc", matchIfMissing = true)
class AccountTccParticipant {

  /** The property that chooses the orchestrated debit: {@code tcc} (default) or {@code saga}. */
  static final String PROPERTY = "examples.saga.debit";
  /** The branch id ({@code converge-tcc-branch-id}) of the debit in the order service's saga. */
  static final String BRANCH = "debit";

  private static final Logger log = LoggerFactory.getLogger(AccountTccParticipant.class);
  private static final byte[] DONE = "{}".getBytes(StandardCharsets.UTF_8);

  @Bean
  TccParticipant accountDebitBranch(TxnProducer producer, EventCodec codec, Clock clock, MeterRegistry registry,
      ObjectProvider<Tracing> tracing) {
    return TccParticipant.builder("account").producer(producer).tracing(tracing.getIfAvailable(Tracing::global))
        .barrier(TccBarrier.builder().metrics(MicrometerTccMetrics.of(registry)).build())
        .branch(BRANCH, (c, m) -> freeze(c, codec.read(m, SagaOrder.class), clock),
            (c, m) -> debitFrozen(c, codec.read(m, SagaOrder.class), clock),
            (c, m) -> unfreeze(c, codec.read(m, SagaOrder.class)))
        .build();
  }

  /** Try: the amount moved from the balance to the frozen balance, and its freeze row. */
  private static byte[] freeze(Connection c, SagaOrder o, Clock clock) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("""
        UPDATE account SET balance_cents = balance_cents - ?, frozen_cents = frozen_cents + ?, version = version + 1
         WHERE customer_id = ? AND balance_cents >= ?""")) {
      ps.setLong(1, o.amountCents());
      ps.setLong(2, o.amountCents());
      ps.setString(3, o.customerId());
      ps.setLong(4, o.amountCents());
      if (ps.executeUpdate() != 1) {
        boolean known = Rows.exists(c, "account", "customer_id", o.customerId());
        log.info("order {}: freeze of {} cents refused ({})", o.orderId(), o.amountCents(),
            known ? "insufficient funds" : "unknown account");
        throw known ? new BusinessException("insufficient-funds", "insufficient funds")
            : new BusinessException("unknown-account", "unknown account");
      }
    }
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO account_freeze (order_id, customer_id, amount_cents, created_at) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, o.orderId());
      ps.setString(2, o.customerId());
      ps.setLong(3, o.amountCents());
      ps.setTimestamp(4, Timestamp.from(clock.instant()));
      ps.executeUpdate();
    }
    return DONE;
  }

  /** Confirm: the frozen amount debited for good, with the order's ledger entry. */
  private static byte[] debitFrozen(Connection c, SagaOrder o, Clock clock) throws SQLException {
    long amount = release(c, o, false);
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO account_entry (order_id, customer_id, amount_cents, created_at) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, o.orderId());
      ps.setString(2, o.customerId());
      ps.setLong(3, amount);
      ps.setTimestamp(4, Timestamp.from(clock.instant()));
      ps.executeUpdate();
    }
    return DONE;
  }

  /** Cancel: the frozen amount back in the balance. */
  private static byte[] unfreeze(Connection c, SagaOrder o) throws SQLException {
    long amount = release(c, o, true);
    log.info("order {}: debit cancelled, {} cents unfrozen", o.orderId(), amount);
    return DONE;
  }

  /**
   * Deletes the order's freeze row and takes its amount out of the frozen balance (back into the balance when
   * {@code refund}). The barrier runs Confirm and Cancel only after the Try ran here, so the row exists: its absence
   * is a defect, thrown (the call rolls back and is answered as a technical failure).
   */
  private static long release(Connection c, SagaOrder o, boolean refund) throws SQLException {
    long amount;
    String customer;
    try (PreparedStatement ps = c.prepareStatement(
        "DELETE FROM account_freeze WHERE order_id = ? RETURNING customer_id, amount_cents")) {
      ps.setString(1, o.orderId());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalStateException("order " + o.orderId() + ": no frozen amount, though its Try ran");
        }
        customer = rs.getString(1);
        amount = rs.getLong(2);
      }
    }
    try (PreparedStatement ps = c.prepareStatement("""
        UPDATE account SET frozen_cents = frozen_cents - ?, balance_cents = balance_cents + ?, version = version + 1
         WHERE customer_id = ?""")) {
      ps.setLong(1, amount);
      ps.setLong(2, refund ? amount : 0);
      ps.setString(3, customer);
      ps.executeUpdate();
    }
    return amount;
  }
}
