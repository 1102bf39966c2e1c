package io.converge.ops.doctor;

import java.util.Objects;

/**
 * The outcome of one check of {@code converge doctor}: its status, the check's name (e.g.
 * {@code postgres.wal_level}), what was found, and for a warning or failure what to do.
 *
 * @param status pass, warn or fail
 * @param check the check's name, {@code <system>.<what>}
 * @param found what was found, one line
 * @param fix what to do, null when the check passed
 */
public record Finding(Status status, String check, String found, String fix) {

  /** The three outcomes, in increasing severity. */
  public enum Status {
    /** As Converge needs it. */
    PASS,
    /** Works, but a failure or a slow recovery is near. */
    WARN,
    /** Breaks a guarantee (a message lost or delivered without its commit) or Converge does not run. */
    FAIL
  }

  /** Checks the fields: a warning or failure must say what to do. */
  public Finding {
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(check, "check");
    Objects.requireNonNull(found, "found");
    if (status != Status.PASS && fix == null) {
      throw new IllegalArgumentException("a " + status + " finding needs a fix: " + check);
    }
  }

  /** A passed check. */
  public static Finding pass(String check, String found) {
    return new Finding(Status.PASS, check, found, null);
  }

  /** A warning with its fix. */
  public static Finding warn(String check, String found, String fix) {
    return new Finding(Status.WARN, check, found, fix);
  }

  /** A failure with its fix. */
  public static Finding fail(String check, String found, String fix) {
    return new Finding(Status.FAIL, check, found, fix);
  }
}
