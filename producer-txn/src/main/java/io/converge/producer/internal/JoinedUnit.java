package io.converge.producer.internal;

import io.converge.core.ConvergeException;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.spi.CommitWrite;
import io.converge.producer.spi.JoinedTransaction;

/** A transaction joined by {@link DefaultTxnProducer#join}. Used by one thread. */
final class JoinedUnit implements JoinedTransaction {

  private final UnitContext ctx;
  private final long start = System.nanoTime();
  /** Set once {@link #beforeCommit} ran: the messages' part before the commit is done, no message may join. */
  private boolean sealed;

  JoinedUnit(UnitContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public void beforeCommit() {
    sealed = true;
    CommitWrite write = ctx.beforeCommit(start, "Transaction", " after its first publish");
    if (write != null) {
      ctx.write(write); // the transaction's owner commits
    }
  }

  @Override
  public int published() {
    return ctx.published();
  }

  @Override
  public void rollbackToSavepoint(int kept) {
    ctx.rollbackTo(kept);
  }

  @Override
  public String publish(OutgoingMessage message) {
    if (sealed) {
      // e.g. a Spring BEFORE_COMMIT listener that runs after the publisher's synchronization: the backend already
      // wrote (or sent) the unit's messages, so this one would not be delivered; refused, the commit fails instead
      throw new ConvergeException("Message " + message.id() + " of group " + ctx.group() + " was published after its"
          + " transaction's messages were completed for the commit (beforeCommit ran); publish before the commit"
          + " starts: the transaction is rolled back", message.id(), null);
    }
    return ctx.publish(message);
  }

  @Override
  public void completed(boolean committed) {
    if (committed) {
      ctx.afterCommit();
    } else {
      ctx.afterRollback();
    }
  }
}
