package io.converge.examples.payment;

import io.converge.consumer.StateMachine;

/** The card-payment states of article 4.1; {@link #MACHINE} is their whitelist. */
public enum ChargeState {

  CREATED, AUTHORIZING, AUTHORIZED, CAPTURING, CAPTURED, REFUNDING, REFUNDED, FAILED, REVERSED, CANCELED;

  /**
   * Created → Authorizing → Authorized → Capturing → Captured → Refunding → Refunded, with the failure
   * edges Authorizing → Failed, Capturing → Authorized (capture retry), Refunding → Captured (refund
   * failed), Authorized → Reversed (void) and Created → Canceled. Compare-and-swap on table
   * {@code charge} ({@code state}, {@code version}).
   */
  public static final StateMachine<ChargeState> MACHINE = StateMachine.builder("charge", ChargeState.class)
      .allow(CREATED, AUTHORIZING, CANCELED)
      .allow(AUTHORIZING, AUTHORIZED, FAILED)
      .allow(AUTHORIZED, CAPTURING, REVERSED)
      .allow(CAPTURING, CAPTURED, AUTHORIZED)
      .allow(CAPTURED, REFUNDING)
      .allow(REFUNDING, REFUNDED, CAPTURED)
      .table("charge")
      .columns("id", "state", "version")
      .build();
}
