package io.converge.broker.internal;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The one wait-with-a-deadline of the embedded servers: look, and while the answer is not there and the deadline has
 * not passed, sleep a short interval and look again. A look after the deadline still counts (the answer is taken
 * when it came late but before the caller gave up). A look may have side effects (wake a thread, register again) and
 * may throw to end the wait early (the process it waits for exited). Not for users. Stateless.
 */
public final class Poll {

  /** The usual interval between looks. */
  public static final Duration EVERY = Duration.ofMillis(20);

  private Poll() {
  }

  /**
   * Looks every {@code every} until {@code look} returns a value, for at most {@code timeout}.
   *
   * @return the first non-null value, or null when {@code timeout} passed first
   * @throws InterruptedException when the sleep between looks is interrupted
   */
  public static <T> T value(Duration timeout, Duration every, Supplier<T> look) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      T value = look.get();
      if (value != null) {
        return value;
      }
      if (System.nanoTime() > deadline) {
        return null;
      }
      Thread.sleep(every.toMillis());
    }
  }

  /**
   * Looks every {@code every} until {@code done}, for at most {@code timeout}.
   *
   * @return whether it was done within {@code timeout}
   * @throws InterruptedException when the sleep between looks is interrupted
   */
  public static boolean until(Duration timeout, Duration every, BooleanSupplier done) throws InterruptedException {
    return value(timeout, every, () -> done.getAsBoolean() ? Boolean.TRUE : null) != null;
  }

  /**
   * {@link #value}, failing instead of returning null.
   *
   * @param timedOut the error thrown when {@code timeout} passes first
   * @param interrupted the error thrown when the wait is interrupted (the thread's interrupt is kept)
   * @param <X> an unchecked exception or an error (an {@link AssertionError} in test support)
   * @return the first non-null value of {@code look}
   */
  public static <T, X extends Throwable> T value(Duration timeout, Duration every, Supplier<T> look,
      Supplier<? extends X> timedOut, Function<InterruptedException, ? extends X> interrupted) throws X {
    T value;
    try {
      value = value(timeout, every, look);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw interrupted.apply(e);
    }
    if (value == null) {
      throw timedOut.get();
    }
    return value;
  }

  /** {@link #until}, failing with {@code timedOut} or {@code interrupted} instead of returning false. */
  public static <X extends Throwable> void until(Duration timeout, Duration every, BooleanSupplier done,
      Supplier<? extends X> timedOut, Function<InterruptedException, ? extends X> interrupted) throws X {
    value(timeout, every, () -> done.getAsBoolean() ? Boolean.TRUE : null, timedOut, interrupted);
  }
}
