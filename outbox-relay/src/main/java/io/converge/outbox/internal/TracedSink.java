package io.converge.outbox.internal;

import io.converge.core.tracing.MessageSpan;
import io.converge.core.tracing.Tracing;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.SendAllResult;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A sink whose every send is a PRODUCER span {@code "send {topic}"} linked to the row's creation context (the
 * {@code traceparent} the producer stored with the row), so a re-send after a crash is linked to the original trace
 * too; the record goes out with its headers as stored, creation context included. A span of a record the broker
 * refused is marked failed. Thread-safety: that of the sink it wraps.
 */
public final class TracedSink implements OutboxSink {

  private final OutboxSink sink;
  private final Tracing tracing;

  private TracedSink(OutboxSink sink, Tracing tracing) {
    this.sink = sink;
    this.tracing = tracing;
  }

  /**
   * {@code sink} traced by {@code tracing}; {@code sink} itself when {@code tracing} is disabled or {@code sink} is
   * null (which the settings then refuse, naming it).
   */
  public static OutboxSink wrap(OutboxSink sink, Tracing tracing) {
    return sink != null && tracing.enabled() ? new TracedSink(sink, tracing) : sink;
  }

  @Override
  public String name() {
    return sink.name();
  }

  @Override
  public void send(OutboxRecord record) throws Exception {
    try (MessageSpan span = span(record)) {
      try {
        sink.send(record);
      } catch (Exception e) {
        span.failed(e);
        throw e;
      }
    }
  }

  @Override
  public SendAllResult sendAll(List<OutboxRecord> records) {
    Map<OutboxRecord, MessageSpan> spans = new IdentityHashMap<>();
    for (OutboxRecord r : records) {
      spans.put(r, span(r));
    }
    try {
      SendAllResult result = sink.sendAll(records);
      for (SendAllResult.Failure f : result.failed()) {
        spans.getOrDefault(f.record(), MessageSpan.NONE).failed(f.error());
      }
      return result;
    } catch (RuntimeException e) {
      spans.values().forEach(s -> s.failed(e));
      throw e;
    } finally {
      spans.values().forEach(MessageSpan::close);
    }
  }

  private MessageSpan span(OutboxRecord r) {
    return tracing.send(sink.name(), r.topic(), r.messageId(), r.headers());
  }

  @Override
  public void close() {
    sink.close();
  }
}
