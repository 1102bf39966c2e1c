package io.converge.examples.demo;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The outages the demo inflicts on each backend's phase while its order traffic runs: PostgreSQL
 * frozen ({@code SIGSTOP}) for {@code freezeDb}, then the phase's broker out for {@code stopBroker}
 * (RocketMQ's broker stopped and started again on its store in the rocketmq and outbox phases, the
 * Pulsar child JVM frozen in the pulsar phase). Zero means none. Immutable.
 *
 * @param freezeDb how long PostgreSQL is frozen in each phase; zero for never
 * @param stopBroker how long the phase's broker is out; zero for never
 */
public record Outages(Duration freezeDb, Duration stopBroker) {

  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m)?");
  private static final Duration MAX = Duration.ofMinutes(30);

  /** No outage: the demo as it always ran. */
  public static final Outages NONE = new Outages(Duration.ZERO, Duration.ZERO);

  /**
   * Service properties for runs with database outages: a request for a connection gives up after 1.25 s
   * (validation 0.5 s) instead of the pool's 30 s, so that a frozen or restarting database fails requests fast and
   * the clients retry.
   */
  public static final Map<String, String> SHORT_POOL_TIMEOUT = Map.of(
      "spring.datasource.hikari.connection-timeout", "1250",
      "spring.datasource.hikari.validation-timeout", "500");

  /** How long after the traffic starts the first outage begins. */
  static final Duration DELAY = Duration.ofSeconds(3);

  /** @throws IllegalArgumentException quoting a negative or over-30-minute value */
  public Outages {
    check("--freeze-db", freezeDb);
    check("--stop-broker", stopBroker);
  }

  /** Whether there is any outage. */
  public boolean any() {
    return !freezeDb.isZero() || !stopBroker.isZero();
  }

  /** How long the order traffic is spread, so that it runs through the outages and a little after. */
  Duration trafficSpread() {
    return any() ? DELAY.plus(freezeDb).plus(stopBroker).plusSeconds(5) : Duration.ZERO;
  }

  /** The settle timeout after the traffic: {@code base}, plus three times the outages (consumers back off). */
  Duration settleTimeout(Duration base) {
    return base.plus(freezeDb.plus(stopBroker).multipliedBy(3));
  }

  /** This with {@code --freeze-db=<d>} or {@code --stop-broker=<d>} applied, e.g. {@code --freeze-db=60s}. */
  public Outages with(String option) {
    int eq = option.indexOf('=');
    String name = eq < 0 ? option : option.substring(0, eq);
    String value = eq < 0 ? "" : option.substring(eq + 1);
    return switch (name) {
      case "--freeze-db" -> new Outages(parse(name, value), stopBroker);
      case "--stop-broker" -> new Outages(freezeDb, parse(name, value));
      default -> throw new IllegalArgumentException(
          "demo option must be --freeze-db=<duration> or --stop-broker=<duration>, but was "
              + option);
    };
  }

  /** Parses {@code 60s}, {@code 2m}, {@code 500ms} or a bare number of seconds. */
  static Duration parse(String name, String text) {
    Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new IllegalArgumentException(name + " must be a duration such as 60s, 2m or 500ms, but was '" + text + "'");
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "s" : m.group(2);
    return switch (unit) {
      case "ms" -> Duration.ofMillis(n);
      case "m" -> Duration.ofMinutes(n);
      default -> Duration.ofSeconds(n);
    };
  }

  private static void check(String name, Duration d) {
    if (d == null || d.isNegative() || d.compareTo(MAX) > 0) {
      throw new IllegalArgumentException(name + " must be between 0 and " + MAX.toMinutes() + " minutes, but was " + d);
    }
  }

  @Override
  public String toString() {
    return any() ? "PostgreSQL frozen " + freezeDb.toSeconds() + " s, broker out " + stopBroker.toSeconds() + " s"
        : "none";
  }
}
