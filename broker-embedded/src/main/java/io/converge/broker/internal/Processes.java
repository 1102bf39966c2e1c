package io.converge.broker.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Waiting for a child process to end, and killing it when it does not: how the embedded servers stop their child
 * JVMs. Not for users. Stateless.
 */
public final class Processes {

  private Processes() {
  }

  /**
   * Waits up to {@code timeout} for {@code process} to end. When the wait is interrupted, kills the process
   * ({@code SIGKILL}) and keeps the thread's interrupt.
   *
   * @return whether it ended within {@code timeout}
   */
  public static boolean awaitExit(Process process, Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Waits up to {@code grace} for {@code process} to end; when it has not, kills it ({@code SIGKILL}) and waits up
   * to {@code afterKill} for that.
   */
  public static void awaitOrKill(Process process, Duration grace, Duration afterKill) {
    if (!awaitExit(process, grace)) {
      process.destroyForcibly();
      awaitExit(process, afterKill);
    }
  }
}
