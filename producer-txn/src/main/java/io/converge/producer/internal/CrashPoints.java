package io.converge.producer.internal;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * Named points in the life of a unit of work, where crash tests stop a producing process (a child
 * JVM calls {@code Runtime.halt}) or pause it. In production no hook is installed and a point costs a
 * volatile read. Thread-safe.
 */
public final class CrashPoints {

  /** The points, in the order a unit of work passes them. */
  public enum Point {
    /** A half message (or Pulsar send) was accepted by the broker, before its log row is written. */
    AFTER_BROKER_PREPARE,
    /**
     * The business writes are done and the broker acknowledged the messages; the DB commit is next,
     * with the unit's last log row in its round trip (the other log rows are written).
     */
    BEFORE_DB_COMMIT,
    /** The DB committed; the broker commit (END COMMIT, Pulsar commit) is next. */
    AFTER_DB_COMMIT,
    /**
     * RocketMQ: an END (COMMIT or ROLLBACK) is about to be sent, on its END lane (not the unit's thread); a hook
     * that throws here makes the END fail.
     */
    BROKER_END,
    /**
     * RocketMQ: the broker applied an END and answered, on its END lane; a hook that throws here makes the END look
     * failed to the producer (an answer lost after the broker applied it).
     */
    BROKER_END_ANSWERED,
    /** RocketMQ: a check-back is about to be answered from the log, on the check-back thread; a hook may pause it. */
    CHECK_BACK
  }

  private static volatile Consumer<Point> hook;

  private CrashPoints() {
  }

  /** Installs {@code h} (tests only); {@code null} removes it. */
  public static void install(Consumer<Point> h) {
    hook = h;
  }

  /** Passes point {@code p}: runs the installed hook, if any. */
  public static void pass(Point p) {
    Consumer<Point> h = hook;
    if (h != null) {
      h.accept(Objects.requireNonNull(p));
    }
  }
}
