package io.converge.saga.tcc;

/**
 * The headers (message properties, or HTTP request headers) that carry a TCC branch call, next to the
 * {@link io.converge.core.Envelope} ones (the tenant is {@link io.converge.core.Envelope#TENANT}). Part of the
 * public contract: a participant that is not Converge's reads them to run its barrier.
 */
public final class TccHeaders {

  /** The global transaction's id (the coordinator's saga id). */
  public static final String GLOBAL_ID = "converge-tcc-global-id";
  /** The branch's id, unique within its global transaction. */
  public static final String BRANCH_ID = "converge-tcc-branch-id";
  /** The operation: a {@link TccOperation#wireName()}, {@code try}, {@code confirm} or {@code cancel}. */
  public static final String OPERATION = "converge-tcc-operation";
  /**
   * In an answer (an HTTP response header, or a reply message's header): what the participant's barrier did,
   * {@code RAN}, {@code DUPLICATE}, {@code EMPTY_ROLLBACK} or {@code HANGING_REFUSED}.
   */
  public static final String OUTCOME = "converge-tcc-outcome";

  private TccHeaders() {
  }
}
