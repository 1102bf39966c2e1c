package io.converge.examples.account;

import io.converge.consumer.IdempotentConsumer;
import io.converge.consumer.IncomingMessage;
import io.converge.examples.events.Choreographed;
import io.converge.examples.events.Events.PaymentFailed;
import io.converge.examples.events.Events.PaymentSucceeded;
import io.converge.examples.events.Events.StockReserved;
import io.converge.examples.events.SagaEvents;
import io.converge.examples.events.Topics;
import java.time.Clock;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Debits the buyer for a reserved order. The balance update is versioned ({@code WHERE version = ?
 * AND balance >= amount}): a concurrent debit of the same account makes it re-read and try again, and
 * never overdraws. Insufficient funds is a business outcome: {@code PaymentFailed} is published (and
 * inventory compensates); it is not an exception, so the dedup row commits with it.
 */
@Component
@Choreographed
record DebitHandler(AccountRepository accounts, AccountEntryRepository entries, SagaEvents events, Clock clock) {

  private static final Logger log = LoggerFactory.getLogger(DebitHandler.class);
  private static final int CAS_ATTEMPTS = 10;

  @IdempotentConsumer(topic = "stock-reserved${examples.topic-suffix:}", group = "account-on-stock-reserved", traceAsParent = true)
  public void debit(IncomingMessage m) {
    StockReserved e = events.read(m, StockReserved.class);
    if (entries.existsById(e.orderId())) {
      return; // already debited for this order
    }
    for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      Optional<AccountRepository.Balance> balance = accounts.balance(e.customerId());
      if (balance.isEmpty() || balance.get().balanceCents() < e.amountCents()) {
        String reason = balance.isEmpty() ? "unknown account" : "insufficient funds";
        log.info("order {}: debit of {} cents refused ({})", e.orderId(), e.amountCents(), reason);
        events.publish(Topics.PAYMENT_FAILED, e.orderId(),
            new PaymentFailed(e.orderId(), e.customerId(), e.amountCents(), reason));
        return;
      }
      if (accounts.debit(e.customerId(), balance.get().version(), e.amountCents()) == 1) {
        entries.save(new AccountEntry(e.orderId(), e.customerId(), e.amountCents(), clock.instant()));
        events.publish(Topics.PAYMENT_SUCCEEDED, e.orderId(),
            new PaymentSucceeded(e.orderId(), e.customerId(), e.amountCents()));
        return;
      }
      // another debit of this account committed between our read and our update: read again
    }
    throw new IllegalStateException("Account " + e.customerId() + " changed " + CAS_ATTEMPTS
        + " times while debiting order " + e.orderId() + "; the delivery will be retried");
  }
}
