package io.converge.saga.tcc;

/**
 * A Confirm whose Try never ran here, or was refused as hanging: there is nothing to confirm. A coordinator that
 * follows the protocol never causes it (it confirms only after every Try succeeded); it is thrown, never taken as a
 * success, and the caller's transaction rolls back (the Confirm's row with it), so the person who looks finds the
 * call as it came.
 */
public class ConfirmWithoutTryException extends TccBarrierException {

  private static final long serialVersionUID = 1L;

  /** The reason code replied for it ({@link io.converge.saga.SagaHeaders#REASON}, the HTTP problem's type). */
  public static final String REASON = "CONFIRM_WITHOUT_TRY";

  /** A Confirm for {@code call} whose Try {@code why}. */
  public ConfirmWithoutTryException(TccCall call, String why) {
    super("Confirm refused: the " + call + " has no Try that ran here (" + why
        + "); a coordinator confirms only after every Try succeeded", call);
  }
}
