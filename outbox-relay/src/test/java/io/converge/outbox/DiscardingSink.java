package io.converge.outbox;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;

/** A sink that accepts every record and keeps none: for tests whose relay never reaches a broker. */
public final class DiscardingSink implements OutboxSink {

  @Override
  public String name() {
    return "discarding";
  }

  @Override
  public void send(OutboxRecord record) {
  }

  @Override
  public void close() {
  }
}
