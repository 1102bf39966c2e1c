package io.converge.ops.db;

import io.converge.console.web.Html;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads a duration option the way every {@code converge} command and the console read an age
 * ({@link Html#parseAge}): {@code 7d}, {@code 12h}, {@code 30m}, {@code 90s}, {@code 500ms}, a number of seconds,
 * or ISO-8601 ({@code PT6H}); never negative and at most {@link #MAX} (a larger value would overflow what the commands
 * compute from it, e.g. a cutoff in milliseconds). A subclass names the value in its errors. Stateless.
 */
public class DurationConverter implements ITypeConverter<Duration> {

  /** The largest duration an option takes: 100 years. */
  public static final Duration MAX = Duration.ofDays(36_525);

  private final String what;
  private final String examples;

  /** Errors say {@code a duration must be like 7d, 12h, 30m, 90s, 500ms or PT6H, but was '...'}. */
  public DurationConverter() {
    this("a duration", "7d, 12h, 30m, 90s, 500ms or PT6H");
  }

  /** Errors say {@code <what> must be like <examples>, but was '...'}. */
  protected DurationConverter(String what, String examples) {
    this.what = what;
    this.examples = examples;
  }

  @Override
  public Duration convert(String value) {
    Duration d;
    try {
      d = Html.parseAge(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(what + " must be like " + examples + ", but was '" + value + "'");
    }
    if (d.isNegative()) {
      throw new TypeConversionException(what + " must not be negative, but was '" + value + "'");
    }
    if (d.compareTo(MAX) > 0) {
      throw new TypeConversionException(what + " must be at most 100 years (36525d), but was '" + value + "'");
    }
    return d;
  }
}
