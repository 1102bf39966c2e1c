package io.converge.consumer;

/**
 * A compare-and-swap transition found the entity no longer in the expected state and version (0 rows
 * updated): another writer won the race. Classified as technical, so a consumer retries it and the
 * retry re-reads the state.
 */
public class StaleStateException extends EntityStateException {

  private static final long serialVersionUID = 1L;

  private final String expectedState;
  private final long expectedVersion;

  /** The CAS of {@code entityType}/{@code entityId} from {@code expectedState}@{@code expectedVersion} lost. */
  public StaleStateException(String entityType, Object entityId, String expectedState, long expectedVersion,
      String detail) {
    super("Lost race on " + entityType + " " + entityId + ": expected state " + expectedState + " at version "
        + expectedVersion + ", " + detail, entityType, entityId);
    this.expectedState = expectedState;
    this.expectedVersion = expectedVersion;
  }

  /** The state the caller expected. */
  public String expectedState() {
    return expectedState;
  }

  /** The version the caller expected. */
  public long expectedVersion() {
    return expectedVersion;
  }
}
