package io.converge.saga;

/**
 * A transition found the saga changed since it was read (its compare-and-swap on {@code version} updated no row):
 * another actor drove it first. The transition's transaction rolls back (its command with it); the caller reads
 * the saga again.
 */
public class StaleSagaException extends SagaException {

  private static final long serialVersionUID = 1L;

  private final long expectedVersion;

  /** Saga {@code sagaId} was no longer at {@code expectedVersion}. */
  public StaleSagaException(String sagaId, long expectedVersion) {
    super("Saga " + sagaId + " changed since it was read (expected version " + expectedVersion + ")", sagaId);
    this.expectedVersion = expectedVersion;
  }

  /** The version the transition expected. */
  public long expectedVersion() {
    return expectedVersion;
  }
}
