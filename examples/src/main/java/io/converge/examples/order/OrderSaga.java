package io.converge.examples.order;

import io.converge.consumer.StateMachine;
import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.SagaOrder;
import io.converge.examples.events.Orchestrated;
import io.converge.examples.events.Topics;
import io.converge.saga.RetryPolicy;
import io.converge.saga.SagaDefinition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The orchestrated order saga (article section 10), defined in the order service, whose saga coordinator (converge-saga's
 * Spring auto-configuration, {@code converge.saga.*}) drives it:
 *
 * <ol>
 *   <li>{@code open} (local): nothing forward; its compensation marks the order CANCELED, with the reason of the step
 *       that refused ({@code stock: ...} or {@code payment: ...});</li>
 *   <li>{@code reserve} at inventory: takes the units; its compensation gives them back;</li>
 *   <li>{@code debit} at account: the Try of the TCC branch {@code debit} ({@code examples.saga.debit=tcc}, the
 *       default): freezes the amount; its compensation is the branch's Cancel, which unfreezes it. With
 *       {@code examples.saga.debit=saga}: debits the buyer, compensated by a refund. A refused debit did nothing and
 *       is not compensated;</li>
 *   <li>{@code notify} at notification: one notification per order; no compensation (a message sent cannot be taken
 *       back);</li>
 *   <li>{@code debit-confirm} at account (TCC only): the branch's Confirm, which debits the frozen amount; asked until
 *       it succeeds, the saga's deadline does not apply to it;</li>
 *   <li>{@code mark-paid} (local): the order PAID, in the transition that applies the last reply.</li>
 * </ol>
 *
 * Out of stock: {@code reserve} refuses, {@code open} is compensated (CANCELED), nothing is debited. A refused debit:
 * the stock is given back, then the order CANCELED. The local steps write the order with plain JDBC on the
 * coordinator's connection (the transition's transaction) and record the transition in the order's history.
 */
@Configuration(proxyBeanMethods = false)
@Orchestrated
class OrderSaga {

  private static final Logger log = LoggerFactory.getLogger(OrderSaga.class);

  /** The saga's name ({@code converge_saga.definition}). */
  static final String NAME = "order";
  /** The TCC branch of the account's debit ({@code converge-tcc-branch-id}; the global id is the order id). */
  static final String DEBIT_BRANCH = "debit";
  /** {@code examples.saga.debit}: the debit as a TCC branch (the default). */
  static final String DEBIT_TCC = "tcc";
  /** {@code examples.saga.debit}: the debit as a saga step, compensated by a refund. */
  static final String DEBIT_SAGA = "saga";
  private static final StateMachine.Cause CAUSE = StateMachine.Cause.of("saga " + NAME);

  @Bean
  SagaDefinition<SagaOrder> orderSagaDefinition(EventCodec codec, Topics topics, Clock clock, SagaMetrics metrics,
      @Value("${examples.saga.step-timeout:PT10S}") Duration stepTimeout,
      @Value("${examples.saga.deadline:PT10M}") Duration deadline,
      @Value("${examples.saga.debit:" + DEBIT_TCC + "}") String debit) {
    boolean tcc = tccDebit(debit);
    RetryPolicy retry = new RetryPolicy(5, Duration.ofMillis(200), Duration.ofSeconds(10));
    SagaDefinition.Builder<SagaOrder> saga = SagaDefinition.builder(NAME, codec.saga(SagaOrder.class))
        .local("open", (c, data) -> data, (c, data) -> end(c, data, OrderState.CANCELED, reason(c, data), clock,
            metrics))
        .remote("reserve", s -> s.participant("inventory")
            .command(topics.of(Topics.INVENTORY_COMMANDS), codec::bytes)
            .compensation(topics.of(Topics.INVENTORY_COMPENSATIONS), codec::bytes).timeout(stepTimeout).retry(retry))
        .remote("debit", s -> {
          s.participant("account").command(topics.of(Topics.ACCOUNT_COMMANDS), codec::bytes)
              .compensation(topics.of(Topics.ACCOUNT_COMPENSATIONS), codec::bytes).timeout(stepTimeout).retry(retry);
          if (tcc) {
            s.tccTry(DEBIT_BRANCH); // Try freezes; the compensation is its Cancel (unfreezes)
          }
        })
        .remote("notify", s -> s.participant("notification")
            .command(topics.of(Topics.NOTIFICATION_COMMANDS), codec::bytes).timeout(stepTimeout).retry(retry));
    if (tcc) {
      // Confirm debits what the Try froze: asked until it succeeds, past the deadline too (a Try promised it can)
      saga.remote("debit-confirm", s -> s.participant("account").tccConfirm(DEBIT_BRANCH)
          .command(topics.of(Topics.ACCOUNT_COMMANDS), codec::bytes).timeout(stepTimeout).retry(retry));
    }
    return saga.local("mark-paid", (c, data) -> end(c, data, OrderState.PAID, null, clock, metrics))
        .deadline(deadline)
        .build();
  }

  /**
   * Whether {@code examples.saga.debit} makes the debit a TCC branch ({@value #DEBIT_TCC}, the default) or a saga
   * step ({@value #DEBIT_SAGA}).
   *
   * @throws IllegalArgumentException for another value, quoting it
   */
  static boolean tccDebit(String debit) {
    return switch (debit) {
      case DEBIT_TCC -> true;
      case DEBIT_SAGA -> false;
      default -> throw new IllegalArgumentException("examples.saga.debit must be " + DEBIT_TCC + " or " + DEBIT_SAGA
          + ", but was '" + debit + "'");
    };
  }

  /**
   * Moves the order from CREATED to {@code to} (a compare-and-swap on its state and version) and appends the history
   * row, on the transition's connection.
   */
  private static SagaOrder end(Connection c, SagaOrder data, OrderState to, String reason, Clock clock,
      SagaMetrics metrics) throws SQLException {
    Instant now = clock.instant();
    try (PreparedStatement ps = c.prepareStatement("""
        UPDATE orders SET state = ?, cancel_reason = ?, updated_at = ?, version = version + 1
         WHERE id = ? AND state = 'CREATED' RETURNING version, created_at""")) {
      ps.setString(1, to.name());
      ps.setString(2, reason);
      ps.setTimestamp(3, Timestamp.from(now));
      ps.setString(4, data.orderId());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          // only the saga moves an orchestrated order: another state here is a bug, never a business outcome
          throw new IllegalStateException("order " + data.orderId() + " is not CREATED: cannot move it to " + to);
        }
        OrderState.MACHINE.record(c, data.orderId(), OrderState.CREATED, to, rs.getLong(1), CAUSE);
        metrics.ended(rs.getTimestamp(2).toInstant(), to);
      }
    }
    log.debug("order {} is {} (saga)", data.orderId(), to);
    return data;
  }

  /**
   * Why the saga compensates: the step that refused, read from the saga's timeline ({@code converge_saga_event}, its
   * {@code FAILED} event, written in this transition), as the choreographed flow words it.
   */
  private static String reason(Connection c, SagaOrder data) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("""
        SELECT step, payload FROM converge_saga_event WHERE saga_id = ? AND kind = 'FAILED'
         ORDER BY seq DESC LIMIT 1""")) {
      ps.setString(1, data.orderId());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return "saga: compensated without a refusal (deadline or operator)";
        }
        // the payload is the reply's outcome, reason code and body: "BUSINESS_FAILURE insufficient-funds ..."
        String[] note = rs.getString(2).split(" ", 3);
        String why = note.length == 3 ? note[2] : rs.getString(2);
        int colon = why.indexOf(": "); // the body is the BusinessException's "code: message"
        why = colon < 0 ? why : why.substring(colon + 2);
        return switch (rs.getString(1)) {
          case "reserve" -> "stock: " + why;
          case "debit" -> "payment: " + why;
          default -> rs.getString(1) + ": " + why;
        };
      }
    }
  }
}
