package io.converge.consumer.spi;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.core.ConvergeException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * For {@link ConsumerBinding} implementations: runs {@link IdempotentHandler#handle} on the binding's
 * consumer threads and remembers which threads are inside it, so that {@link #close()} can interrupt
 * them. {@code handle} blocks for as long as the database or a broker is unavailable (it waits and runs
 * the message again, without limit); the interrupt ends that wait, the message is then not acked and
 * the broker redelivers it. Thread-safe.
 */
public final class InFlightHandlers {

  private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /** Tracks no thread yet. */
  public InFlightHandlers() {
  }

  /**
   * {@code handler.handle(message)} on the calling thread.
   *
   * @throws ConvergeException when this binding is closed, or as {@link IdempotentHandler#handle}
   *     throws: either way, do not ack
   */
  public Outcome handle(IdempotentHandler handler, IncomingMessage message) {
    Thread self = Thread.currentThread();
    threads.add(self); // before the check: close() either sees this thread or this thread sees closed
    try {
      if (closed) {
        throw new ConvergeException("The binding of group " + handler.group() + " is closed; message "
            + message.brokerMessageId() + " on " + message.topic() + " is left for redelivery", null, null);
      }
      return handler.handle(message);
    } finally {
      threads.remove(self);
      if (closed) {
        Thread.interrupted(); // the interrupt was for this delivery; the pool thread goes on clean
      }
    }
  }

  /** Whether {@link #close()} was called. */
  public boolean isClosed() {
    return closed;
  }

  /** Refuses new deliveries and interrupts the threads inside {@code handle}. Idempotent. */
  public void close() {
    closed = true;
    threads.forEach(Thread::interrupt);
  }
}
