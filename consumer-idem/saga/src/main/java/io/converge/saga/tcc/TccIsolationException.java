package io.converge.saga.tcc;

/**
 * A Confirm or a Cancel called in a {@code REPEATABLE READ} transaction: refused before its body runs, the caller's
 * transaction rolls back. There the second of a racing Confirm and Cancel would get the branch's try-row lock after
 * the first committed and then look for the first's row with its older snapshot: it would not see it, and both bodies
 * would run (the money debited and released). Run the barrier in {@code READ COMMITTED} (PostgreSQL's default) or
 * {@code SERIALIZABLE} (where that race is a serialization failure, retried as any). A configuration error: retrying
 * in the same isolation level fails again.
 */
public class TccIsolationException extends TccBarrierException {

  private static final long serialVersionUID = 1L;

  /** The {@code call} made in isolation level {@code isolation} (PostgreSQL's name, e.g. "repeatable read"). */
  public TccIsolationException(TccCall call, String isolation) {
    super("The " + call + " was refused: the TCC barrier cannot run in " + isolation.toUpperCase(java.util.Locale.ROOT)
        + " (a racing Confirm and Cancel could both run there); use READ COMMITTED or SERIALIZABLE", call);
  }
}
