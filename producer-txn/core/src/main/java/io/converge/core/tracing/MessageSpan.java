package io.converge.core.tracing;

/**
 * A span Converge started around one message: a producer's publish or send, or a consumer's processing. Closing it
 * ends the span (and, for a processing span, makes the previous context current again). A span of a disabled
 * {@link Tracing} is {@link #NONE}, which does nothing. Not thread-safe: used by the thread that started it.
 */
public interface MessageSpan extends AutoCloseable {

  /** The span that does nothing. */
  MessageSpan NONE = new MessageSpan() {

    @Override
    public MessageSpan attribute(String name, String value) {
      return this;
    }

    @Override
    public void failed(Throwable failure) {
    }

    @Override
    public void close() {
    }
  };

  /** Sets the attribute {@code name} to {@code value} (a null value sets nothing); returns this span. */
  MessageSpan attribute(String name, String value);

  /** Marks the span as failed with {@code failure} (status ERROR, the exception recorded as an event). */
  void failed(Throwable failure);

  /** Ends the span; a second call does nothing. */
  @Override
  void close();
}
