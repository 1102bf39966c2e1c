package io.converge.outbox.spi;

import java.util.List;
import java.util.Objects;

/**
 * What {@link OutboxSink#sendAll} did with a batch: the records the broker stored and the records it
 * failed, each with its error. A record in neither list was not sent (a record of its key failed before
 * it, or the sink stopped early); it stays unpublished and is offered again by a later cycle. Immutable.
 *
 * @param sent the records the broker stored; never null
 * @param failed the records whose send failed, with the error (classified as for
 *     {@link OutboxSink#send}); never null
 */
public record SendAllResult(List<OutboxRecord> sent, List<Failure> failed) {

  /**
   * One failed record.
   *
   * @param record the record
   * @param error why its send failed: {@link io.converge.core.BrokerUnavailableException} or a
   *     refusal of the message
   */
  public record Failure(OutboxRecord record, Exception error) {

    /** Checks that both are given. */
    public Failure {
      Objects.requireNonNull(record, "record");
      Objects.requireNonNull(error, "error");
    }
  }

  /** Copies the lists. */
  public SendAllResult {
    sent = List.copyOf(sent);
    failed = List.copyOf(failed);
  }
}
