package io.converge.ops.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

/**
 * The faults of one run, when and how, drawn from {@code --seed}: the same seed, duration and fault list give the
 * same plan. Each kind is injected {@code perKind} times at a random moment between 10% and 75% of the traffic's
 * duration, so that the last fault ends while orders still flow. Immutable.
 *
 * @param steps the faults in the order they start
 */
public record FaultPlan(List<Step> steps) {

  /** What a network fault does to its proxy. */
  public enum Net {
    LATENCY, DROP, RESET, BLACKOUT
  }

  /**
   * One fault.
   *
   * @param at when it starts, after the traffic started
   * @param fault its kind
   * @param group the service process it hits (kill, skew), or the proxy (network: 0 the database, 1 the broker)
   * @param length how long it lasts (kill: before the restart; broker, network: the outage; skew: the skew itself)
   * @param times redelivery: how many times each message is sent again; skew: the sign (+1/-1); reply: the replies
   *     dropped
   * @param net network: what it does
   */
  public record Step(Duration at, Fault fault, int group, Duration length, int times, Net net) {

    /** A line for the verdict, in the choreographed flow. */
    public String describe() {
      return describe(false);
    }

    /** A line for the verdict; {@code orchestrated}: the services run the orchestrated flow (commands, replies). */
    public String describe(boolean orchestrated) {
      return switch (fault) {
        case KILL -> "kill -9 of service process " + group + ", restarted " + length.toMillis() + " ms later";
        case BROKER -> "broker out for " + length.toSeconds() + " s";
        case POSTGRES -> "PostgreSQL crash restart (a backend killed -9)";
        case NETWORK -> (group == 0 ? "database" : "broker") + " proxy: " + switch (net) {
          case LATENCY -> "latency 100 ms + jitter 0-200 ms for " + length.toSeconds() + " s";
          case DROP -> "every connection dropped (FIN)";
          case RESET -> "every connection reset (RST)";
          case BLACKOUT -> "blackout for " + length.toSeconds() + " s";
        };
        case REDELIVERY -> (orchestrated ? "the first reserve command (saga command, original message and command id)"
            + " of every 5th saga" : "OrderCreated of every 5th order") + " sent " + times
            + " more times (raw client)";
        case REPLY -> orchestrated ? times + " reserve replies dropped, 1 notify reply held back past the step timeout"
            + " (the first ones after the traffic starts), the reserve reply of every 5th saga sent again with its id"
            + " and with a new one (raw client); TCC debit: 1 Try held in transit past the saga's global timeout"
            + " (delivered after its Cancel), 1 Confirm and 1 Cancel delivered again (with their id and a new one)"
            : "none: the choreographed flow has no saga replies";
        case SKEW -> "service process " + group + " restarted with its clock " + (times > 0 ? "+" : "-")
            + length.toMinutes() + " min";
      };
    }
  }

  /**
   * The plan of a run of {@code duration} with each of {@code faults} {@code perKind} times, drawn from {@code seed}.
   *
   * @param groups the number of service processes
   */
  public static FaultPlan of(long seed, Duration duration, List<Fault> faults, int perKind, int groups) {
    Random r = new Random(seed);
    List<Step> steps = new ArrayList<>();
    long ms = duration.toMillis();
    for (Fault f : faults) {
      for (int i = 0; i < perKind; i++) {
        Duration at = Duration.ofMillis(ms / 10 + (long) (r.nextDouble() * ms * 0.65));
        Step s = switch (f) {
          case KILL -> new Step(at, f, r.nextInt(groups), Duration.ofMillis(500 + r.nextInt(2_500)), 0, null);
          case BROKER -> new Step(at, f, 0, Duration.ofSeconds(2 + r.nextInt(4)), 0, null);
          case POSTGRES -> new Step(at, f, 0, Duration.ZERO, 0, null);
          case NETWORK -> new Step(at, f, r.nextInt(2), Duration.ofSeconds(2 + r.nextInt(3)), 0,
              Net.values()[r.nextInt(Net.values().length)]);
          case REDELIVERY -> new Step(at, f, 0, Duration.ZERO, 2 + r.nextInt(4), null);
          case SKEW -> new Step(at, f, r.nextInt(groups), Duration.ofMinutes(1 + r.nextInt(5)),
              r.nextBoolean() ? 1 : -1, null);
          case REPLY -> new Step(at, f, 0, Duration.ZERO, 2, null);
        };
        steps.add(s);
      }
    }
    steps.sort(Comparator.comparing(Step::at));
    return new FaultPlan(List.copyOf(steps));
  }
}
