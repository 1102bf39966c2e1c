package io.converge.consumer;

/** The card payment of the article's chapter 4.1. */
enum PaymentState {

  CREATED, AUTHORIZING, AUTHORIZED, FAILED, CAPTURING, CAPTURED, REFUNDING, REFUNDED, REVERSED, CANCELED;

  /** The article's whitelist, on table {@code payment}. */
  static StateMachine<PaymentState> machine(StateMachine.ConflictPolicy policy) {
    return StateMachine.builder("payment", PaymentState.class)
        .allow(CREATED, AUTHORIZING, CANCELED)
        .allow(AUTHORIZING, AUTHORIZED, FAILED)
        .allow(AUTHORIZED, CAPTURING, REVERSED)
        .allow(CAPTURING, CAPTURED, AUTHORIZED)
        .allow(CAPTURED, REFUNDING)
        .allow(REFUNDING, REFUNDED, CAPTURED)
        .onConflict(policy)
        .build();
  }
}
