package io.converge.examples.order;

import io.converge.consumer.StateMachine;

/** An order's states; {@link #MACHINE} is the whitelist of moves. */
public enum OrderState {

  /** Placed; the saga runs. */
  CREATED,
  /** Stock sold and buyer debited. Final. */
  PAID,
  /** No stock, or the debit was refused (the stock is then released). Final. */
  CANCELED;

  /** CREATED → PAID | CANCELED; nothing leaves a final state. */
  public static final StateMachine<OrderState> MACHINE = StateMachine.builder("order", OrderState.class)
      .allow(CREATED, PAID, CANCELED)
      .build();
}
