package io.converge.examples.account;

import io.converge.consumer.BusinessException;
import io.converge.core.tracing.Tracing;
import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.SagaOrder;
import io.converge.examples.events.Orchestrated;
import io.converge.examples.events.Rows;
import io.converge.producer.TxnProducer;
import io.converge.saga.SagaParticipant;
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
 * Account's part of the orchestrated saga: the participant {@code account}. Step {@code debit} debits the buyer in
 * one conditional update ({@code balance >= amount}: never overdrawn) and writes the order's ledger entry;
 * insufficient funds is a refusal (the saga gives the stock back and cancels the order). Its compensation, the
 * refund, deletes the entry and credits the amount back: only a saga's deadline reaches it (a refused debit did
 * nothing, so it is not compensated). Each runs with the participant's stored reply in one transaction. Present with
 * {@code examples.saga.debit=saga}; with the default, {@code tcc}, the participant is {@link AccountTccParticipant}.
 */
@Configuration(proxyBeanMethods = false)
@Orchestrated
@ConditionalOnProperty(name = AccountTccParticipant.PROPERTY, havingValue = "saga")
class AccountParticipant {

  private static final Logger log = LoggerFactory.getLogger(AccountParticipant.class);
  private static final byte[] DONE = "{}".getBytes(StandardCharsets.UTF_8);

  @Bean
  SagaParticipant accountSagaParticipant(TxnProducer producer, EventCodec codec, Clock clock,
      ObjectProvider<Tracing> tracing) {
    return SagaParticipant.builder("account").producer(producer).tracing(tracing.getIfAvailable(Tracing::global))
        .step("debit", (c, m) -> debit(c, codec.read(m, SagaOrder.class), clock))
        .compensation("debit", (c, m) -> refund(c, codec.read(m, SagaOrder.class)))
        .build();
  }

  private static byte[] debit(Connection c, SagaOrder o, Clock clock) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("""
        UPDATE account SET balance_cents = balance_cents - ?, version = version + 1
         WHERE customer_id = ? AND balance_cents >= ?""")) {
      ps.setLong(1, o.amountCents());
      ps.setString(2, o.customerId());
      ps.setLong(3, o.amountCents());
      if (ps.executeUpdate() != 1) {
        boolean known = Rows.exists(c, "account", "customer_id", o.customerId());
        log.info("order {}: debit of {} cents refused ({})", o.orderId(), o.amountCents(),
            known ? "insufficient funds" : "unknown account");
        throw known ? new BusinessException("insufficient-funds", "insufficient funds")
            : new BusinessException("unknown-account", "unknown account");
      }
    }
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO account_entry (order_id, customer_id, amount_cents, created_at) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, o.orderId());
      ps.setString(2, o.customerId());
      ps.setLong(3, o.amountCents());
      ps.setTimestamp(4, Timestamp.from(clock.instant()));
      ps.executeUpdate();
    }
    return DONE;
  }

  /** The compensation: the ledger entry removed and its amount credited back; nothing when there is none. */
  private static byte[] refund(Connection c, SagaOrder o) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "DELETE FROM account_entry WHERE order_id = ? RETURNING customer_id, amount_cents")) {
      ps.setString(1, o.orderId());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return DONE;
        }
        try (PreparedStatement credit = c.prepareStatement(
            "UPDATE account SET balance_cents = balance_cents + ?, version = version + 1 WHERE customer_id = ?")) {
          credit.setLong(1, rs.getLong(2));
          credit.setString(2, rs.getString(1));
          credit.executeUpdate();
        }
        log.info("order {}: compensated, {} cents refunded", o.orderId(), rs.getLong(2));
      }
    }
    return DONE;
  }
}
