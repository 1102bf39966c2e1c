package io.converge.saga.tcc;

/**
 * A Confirm of a branch whose Cancel already took effect here: running the confirm body would consume what the
 * Cancel released. A coordinator that follows the protocol never causes it; it is thrown, never taken as a success,
 * answered as an anomaly ({@link io.converge.saga.ReplyClass#ANOMALY}, HTTP 422), and the caller's transaction rolls
 * back (the Confirm's row with it).
 */
public class ConfirmAfterCancelException extends TccBarrierException {

  private static final long serialVersionUID = 1L;

  /** The reason code replied for it ({@link io.converge.saga.SagaHeaders#REASON}, the HTTP problem's type). */
  public static final String REASON = "CONFIRM_AFTER_CANCEL";

  /** A Confirm for {@code call} whose Cancel ran. */
  public ConfirmAfterCancelException(TccCall call) {
    super("Confirm refused: the " + call + " was cancelled here; its confirm body did not run", call);
  }
}
