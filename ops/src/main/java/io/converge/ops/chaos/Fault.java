package io.converge.ops.chaos;

import java.util.Locale;

/** The kinds of fault {@code converge chaos} injects; {@link #label()} is the name {@code --faults} takes. */
public enum Fault {

  /** A service process killed with -9 mid-flight, then started again. */
  KILL,
  /** The backend's broker out: RocketMQ's broker stopped and started on its store, or Pulsar's JVM SIGSTOP/SIGCONT. */
  BROKER,
  /** PostgreSQL crash-restarted: a backend killed -9, so the postmaster ends every session and replays its WAL. */
  POSTGRES,
  /** The proxy in front of PostgreSQL or the broker: latency and jitter, dropped or reset connections, a blackout. */
  NETWORK,
  /** A topic's messages delivered again N times through the broker's raw client, with their original ids. */
  REDELIVERY,
  /** A service process restarted with its clock skewed by minutes ({@code examples.clock-skew}). */
  SKEW,
  /**
   * The orchestrated flow's saga replies: participants' replies dropped and held back past the step timeout (the
   * examples' chaos-only hook, {@code examples.chaos.reply-faults}), replies duplicated through the broker's raw client;
   * with the TCC debit, a debit Try held in transit past the saga's global timeout (its Cancel first: an empty
   * rollback, the Try refused as hanging) and a Confirm and a Cancel delivered twice (the same hook, in the order
   * service: {@code ChaosTccFaults}).
   */
  REPLY;

  /** The name on the command line. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Parses a label; an unknown one is an {@link IllegalArgumentException} naming the known ones. */
  public static Fault parse(String s) {
    for (Fault f : values()) {
      if (f.label().equals(s.trim().toLowerCase(Locale.ROOT))) {
        return f;
      }
    }
    throw new IllegalArgumentException(
        "--faults takes kill, broker, postgres, network, redelivery, skew, reply, but was '" + s + "'");
  }
}
