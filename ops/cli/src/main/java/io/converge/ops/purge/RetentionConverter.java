package io.converge.ops.purge;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Reads a retention: {@code 1d}, {@code 12h}, {@code 30m}, {@code 90s}, or ISO-8601 ({@code PT6H}). Stateless. */
final class RetentionConverter implements ITypeConverter<Duration> {

  private static final Pattern SHORT = Pattern.compile("(\\d{1,9})([dhms])");

  @Override
  public Duration convert(String value) {
    Matcher m = SHORT.matcher(value);
    Duration d;
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      d = switch (m.group(2)) {
        case "d" -> Duration.ofDays(n);
        case "h" -> Duration.ofHours(n);
        case "m" -> Duration.ofMinutes(n);
        default -> Duration.ofSeconds(n);
      };
    } else {
      try {
        d = Duration.parse(value);
      } catch (RuntimeException e) {
        throw new TypeConversionException("retention must be like 1d, 12h, 30m, 90s or PT6H, but was '" + value + "'");
      }
    }
    if (d.isNegative()) {
      throw new TypeConversionException("retention must not be negative, but was '" + value + "'");
    }
    return d;
  }
}
