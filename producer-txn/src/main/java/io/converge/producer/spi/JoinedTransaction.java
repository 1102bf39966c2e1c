package io.converge.producer.spi;

import io.converge.producer.OutgoingMessage;

/**
 * A transaction joined by {@link JoinableProducer#join}: its messages are delivered if and only if it
 * commits, with the same guarantee as {@code TxnProducer.inTransaction}. The owner of the transaction
 * calls, in this order: {@link #publish} any number of times (and {@link #rollbackToSavepoint} when a
 * savepoint rolls back), {@link #beforeCommit()} just before the database commit, then
 * {@link #completed(boolean)} once the transaction ended. Used by the transaction's thread only; not
 * thread-safe.
 */
public interface JoinedTransaction {

  /**
   * Publishes {@code message} in the joined transaction (see {@code TxnContext#publish}).
   *
   * @return the message id
   * @throws io.converge.core.ConvergeException after {@link #beforeCommit()} (e.g. a Spring {@code BEFORE_COMMIT}
   *     listener running after the publisher's synchronization): the unit's messages are completed for the commit,
   *     this one could not be delivered; the owner's commit fails and the transaction rolls back
   */
  String publish(OutgoingMessage message);

  /** How many messages were published in the joined transaction so far (a savepoint's mark). */
  int published();

  /**
   * A savepoint of the joined transaction was rolled back: the messages published after the first
   * {@code kept} are discarded and never delivered.
   *
   * @param kept {@link #published()} when the savepoint was set; 0 when it was set before the first publish
   * @throws io.converge.core.ConvergeException when the backend cannot discard them (roll the whole
   *     transaction back)
   */
  void rollbackToSavepoint(int kept);

  /**
   * The joined transaction is about to commit: finishes the messages' part that must precede the
   * database commit, and fails when the transaction ran past the local-transaction timeout (counted from
   * the join, i.e. the first publish).
   *
   * @throws io.converge.core.TransactionTimedOutException (or another {@code ConvergeException}) to
   *     make the transaction roll back
   */
  void beforeCommit();

  /**
   * The joined transaction ended: committed ({@code true}) or rolled back. Not called when the
   * outcome is unknown: the backend's recovery resolves it from the transaction log.
   */
  void completed(boolean committed);
}
