package io.converge.outbox;

import io.converge.broker.child.ChildJvm;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A sink for the crash tests' child JVMs: sends through {@code delegate} one record at a time and halts
 * the JVM ({@link ChildJvm#halt}, like kill -9) right after the {@code haltAfter}-th successful send,
 * printing {@code marker}, the count and the record's message id first.
 */
public final class HaltingSink implements OutboxSink {

  private final OutboxSink delegate;
  private final int haltAfter;
  private final String marker;
  private final AtomicInteger sent = new AtomicInteger();

  public HaltingSink(OutboxSink delegate, int haltAfter, String marker) {
    this.delegate = delegate;
    this.haltAfter = haltAfter;
    this.marker = marker;
  }

  /** Successful sends so far. */
  public int sent() {
    return sent.get();
  }

  @Override
  public String name() {
    return "halting-" + delegate.name();
  }

  @Override
  public void send(OutboxRecord record) throws Exception {
    delegate.send(record);
    if (sent.incrementAndGet() == haltAfter) {
      ChildJvm.halt(marker + sent.get() + " " + record.messageId());
    }
  }

  @Override
  public void close() {
    delegate.close();
  }
}
