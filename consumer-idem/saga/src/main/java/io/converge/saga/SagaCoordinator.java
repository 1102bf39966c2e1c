package io.converge.saga;

import io.converge.consumer.IdempotentHandler;
import io.converge.producer.TxnContext;

/**
 * Drives sagas: starts them, applies their participants' replies, and finds the ones that are due (a reply's
 * timeout, a backoff, a deadline) to ask again, go on or compensate. Every transition (the saga's new state, the
 * command it sends next and its events) commits in one {@link io.converge.producer.TxnProducer} unit of work, as a
 * compare-and-swap on the saga's version, so a crash at any point loses nothing and a stale actor changes nothing.
 * Any number of instances may run against one database: no leader, each claims due sagas with
 * {@code FOR UPDATE SKIP LOCKED}.
 *
 * <p>Wiring: apply {@code Migrations.apply(dataSource, "saga")} (and the consumer's and the backend's migrations),
 * bind {@link #replyHandler()} to a consumer of the reply topic (e.g. {@code RocketMQIdempotentConsumer}), and call
 * {@link #startPolling()} (or {@link #poll()} on a schedule of your own).
 *
 * <p>Thread-safe.
 */
public interface SagaCoordinator extends AutoCloseable {

  /** A builder; see {@link SagaCoordinatorBuilder} for the settings and their defaults. */
  static SagaCoordinatorBuilder builder() {
    return new SagaCoordinatorBuilder();
  }

  /**
   * Starts saga {@code sagaId} of {@code definition} with {@code data} in a unit of work of its own: the saga's row,
   * its local first steps and its first command commit together.
   *
   * @return false when a saga of this id exists already (then nothing is done: starting is idempotent)
   * @throws IllegalArgumentException when the definition is not registered with this coordinator
   */
  <D> boolean start(SagaDefinition<D> definition, String sagaId, D data);

  /**
   * Starts a saga inside the caller's unit of work {@code tx} (of a producer on the coordinator's database): it
   * commits with the caller's business writes, or not at all.
   *
   * @return false when a saga of this id exists already
   */
  <D> boolean start(TxnContext tx, SagaDefinition<D> definition, String sagaId, D data);

  /**
   * Starts the TCC global transaction {@code globalId} of {@code definition} (registered with
   * {@link SagaCoordinatorBuilder#tcc}) in a unit of work of its own: its row and its first Try (a branch reached over
   * HTTP is called by the next poll) commit together. The global id is the saga id.
   *
   * @return false when one of this id exists already
   */
  default <D> boolean start(TccDefinition<D> definition, String globalId, D data) {
    return start(definition.saga(), globalId, data);
  }

  /** As {@link #start(TccDefinition, String, Object)}, inside the caller's unit of work {@code tx}. */
  default <D> boolean start(TxnContext tx, TccDefinition<D> definition, String globalId, D data) {
    return start(tx, definition.saga(), globalId, data);
  }

  /**
   * The handler of the reply topic: deduplicates deliveries (a reply message delivered twice is applied once),
   * matches a reply by saga id, step, attempt and direction, and applies it with the transition it causes in one
   * unit of work. A duplicate or late reply is recorded as an event ({@code DUPLICATE_REPLY}, {@code LATE_REPLY})
   * and changes nothing.
   */
  IdempotentHandler replyHandler();

  /**
   * Drives the due sagas once, each in a unit of work of its own, up to the batch size.
   *
   * @return how many sagas it drove
   */
  int poll();

  /** Polls every poll interval on a thread of its own until {@link #close()}. Idempotent. */
  void startPolling();

  /** Stops polling (the producer is the caller's to close). Idempotent. */
  @Override
  void close();
}
