package io.converge.core.internal;

import java.time.Duration;
import java.util.regex.Pattern;

/**
 * Validation of settings at {@code build()}: every failure names the property path and quotes the
 * bad value, in one form, {@code "<property> must <rule>, but was <value>"} (for example
 * {@code relay.batchSize must be between 1 and 10000, but was 0}). Stateless; thread-safe.
 */
public final class Require {

  private Require() {
  }

  /**
   * The text of a failed rule: {@code property + " must " + rule + ", but was " + value}.
   *
   * @param property the property path, e.g. {@code relay.batchSize}
   * @param rule what the value must satisfy, starting with a verb, e.g. {@code be positive}
   * @param value the bad value as it is quoted (null prints as {@code null})
   */
  public static String failure(String property, String rule, Object value) {
    return property + " must " + rule + ", but was " + value;
  }

  /**
   * Fails unless {@code ok}.
   *
   * @throws IllegalArgumentException {@link #failure(String, String, Object) naming} the property and value
   */
  public static void that(boolean ok, String property, String rule, Object value) {
    if (!ok) {
      throw new IllegalArgumentException(failure(property, rule, value));
    }
  }

  /**
   * {@code value} within {@code [min, max]}.
   *
   * @return {@code value}
   * @throws IllegalArgumentException "{@code P must be between min and max, but was v}"
   */
  public static int between(String property, int value, int min, int max) {
    that(value >= min && value <= max, property, "be between " + min + " and " + max, value);
    return value;
  }

  /**
   * {@code value} within {@code [min, max]}.
   *
   * @return {@code value}
   * @throws IllegalArgumentException "{@code P must be between min and max, but was v}"
   */
  public static long between(String property, long value, long min, long max) {
    that(value >= min && value <= max, property, "be between " + min + " and " + max, value);
    return value;
  }

  /**
   * A duration strictly above zero.
   *
   * @return {@code value}
   * @throws IllegalArgumentException "{@code P must be positive, but was v}" (also for null)
   */
  public static Duration positive(String property, Duration value) {
    that(value != null && !value.isNegative() && !value.isZero(), property, "be positive", value);
    return value;
  }

  /**
   * A duration of zero or more (zero usually meaning "off").
   *
   * @return {@code value}
   * @throws IllegalArgumentException "{@code P must be zero or positive, but was v}" (also for null)
   */
  public static Duration notNegative(String property, Duration value) {
    that(value != null && !value.isNegative(), property, "be zero or positive", value);
    return value;
  }

  /**
   * A duration of at least {@code min}; {@code minText} is how the rule names it (e.g. {@code 1 s}).
   *
   * @return {@code value}
   * @throws IllegalArgumentException "{@code P must be at least minText, but was v}" (also for null)
   */
  public static Duration atLeast(String property, Duration value, Duration min, String minText) {
    that(value != null && value.compareTo(min) >= 0, property, "be at least " + minText, value);
    return value;
  }

  /**
   * A duration within {@code [min, max]}; {@code rangeText} is how the rule names them (e.g. {@code 10 ms and 1 h}).
   *
   * @return {@code value}
   * @throws IllegalArgumentException "{@code P must be between rangeText, but was v}" (also for null)
   */
  public static Duration between(String property, Duration value, Duration min, Duration max, String rangeText) {
    that(value != null && value.compareTo(min) >= 0 && value.compareTo(max) <= 0, property, "be between " + rangeText,
        value);
    return value;
  }

  /**
   * A text matching {@code pattern} entirely.
   *
   * @return {@code value}
   * @throws IllegalArgumentException "{@code P must match <pattern>, but was v}" (also for null)
   */
  public static String matches(String property, String value, Pattern pattern) {
    that(value != null && pattern.matcher(value).matches(), property, "match " + pattern.pattern(), value);
    return value;
  }

  /**
   * A required setting.
   *
   * @return {@code value}
   * @throws NullPointerException "{@code P is required}"
   */
  public static <T> T present(String property, T value) {
    if (value == null) {
      throw new NullPointerException(property + " is required");
    }
    return value;
  }
}
