package io.converge.saga.tcc;

/** What a {@link TccBarrier} did with one branch call: each call gets exactly one of these, never a silent success. */
public enum TccOutcome {
  /** The body ran (its writes commit with the barrier row when the caller commits); its result is stored. */
  RAN,
  /** The operation took effect before (a re-sent call): the body did not run; the stored result is returned. */
  DUPLICATE,
  /**
   * A Cancel whose Try never ran here: nothing to release, the cancel body did not run; recorded, and the Try's row
   * is taken so that a late Try is refused ({@link #HANGING_REFUSED}).
   */
  EMPTY_ROLLBACK,
  /**
   * A Try that arrived after its Cancel (a hanging branch): refused, its body did not run; counted
   * ({@code tcc.hanging}), logged and recorded on the barrier row ({@link TccBarrierOps#hangingRefused}).
   */
  HANGING_REFUSED
}
