package io.converge.producer.internal;

import io.converge.producer.OutgoingMessage;
import io.converge.producer.spi.CommitWrite;
import io.converge.producer.spi.JoinedTransaction;

/** A transaction joined by {@link DefaultTxnProducer#join}. Used by one thread. */
final class JoinedUnit implements JoinedTransaction {

  private final UnitContext ctx;
  private final long start = System.nanoTime();

  JoinedUnit(UnitContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public void beforeCommit() {
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
