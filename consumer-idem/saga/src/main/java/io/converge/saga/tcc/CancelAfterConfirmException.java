package io.converge.saga.tcc;

/**
 * A Cancel of a branch whose Confirm already took effect here: running the cancel body would release what the
 * Confirm consumed (money created). A coordinator that follows the protocol never causes it; it is thrown, never
 * taken as a success, answered as an anomaly ({@link io.converge.saga.ReplyClass#ANOMALY}, HTTP 422), and the
 * caller's transaction rolls back (the Cancel's row with it).
 */
public class CancelAfterConfirmException extends TccBarrierException {

  private static final long serialVersionUID = 1L;

  /** The reason code replied for it ({@link io.converge.saga.SagaHeaders#REASON}, the HTTP problem's type). */
  public static final String REASON = "CANCEL_AFTER_CONFIRM";

  /** A Cancel for {@code call} whose Confirm ran. */
  public CancelAfterConfirmException(TccCall call) {
    super("Cancel refused: the " + call + " was confirmed here; its cancel body did not run", call);
  }
}
