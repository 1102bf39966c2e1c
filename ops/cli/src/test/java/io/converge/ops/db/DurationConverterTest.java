package io.converge.ops.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.ops.CliRun;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

/**
 * The one duration syntax of the {@code converge} options (doctor's producer settings, purge's retention) and the
 * console's ages: short units, a number of seconds or ISO-8601, never negative, errors that quote the value.
 */
class DurationConverterTest {

  private final DurationConverter converter = new DurationConverter();

  @Test
  void readsShortUnitsSecondsAndIso() {
    assertThat(converter.convert("7d")).isEqualTo(Duration.ofDays(7));
    assertThat(converter.convert("12h")).isEqualTo(Duration.ofHours(12));
    assertThat(converter.convert("30m")).isEqualTo(Duration.ofMinutes(30));
    assertThat(converter.convert("450s")).isEqualTo(Duration.ofSeconds(450));
    assertThat(converter.convert("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(converter.convert("90")).isEqualTo(Duration.ofSeconds(90));
    assertThat(converter.convert("PT6H")).isEqualTo(Duration.ofHours(6));
  }

  @Test
  void refusesWhatIsNoDurationAndNegativeOnes() {
    assertThatThrownBy(() -> converter.convert("soon")).isInstanceOf(TypeConversionException.class)
        .hasMessage("a duration must be like 7d, 12h, 30m, 90s, 500ms or PT6H, but was 'soon'");
    assertThatThrownBy(() -> converter.convert("-PT1H")).isInstanceOf(TypeConversionException.class)
        .hasMessage("a duration must not be negative, but was '-PT1H'");
  }

  @Test
  void refusesDurationsTheCommandsCouldNotComputeWith() {
    assertThat(converter.convert("36525d")).isEqualTo(DurationConverter.MAX);
    assertThatThrownBy(() -> converter.convert("200000000000d")).isInstanceOf(TypeConversionException.class)
        .hasMessage("a duration must be at most 100 years (36525d), but was '200000000000d'");
    CliRun.of("purge", "--jdbc-url", "jdbc:postgresql://db:5432/app", "--user", "ops", "--retention", "200000000000d")
        .assertFails(2, "retention must be at most 100 years (36525d), but was '200000000000d'");
  }

  @Test
  void theCommandsNameTheirValue() {
    CliRun.of("doctor", "--log-retention", "soon")
        .assertFails(2, "a duration must be like 7d, 12h, 30m, 90s, 500ms or PT6H, but was 'soon'");
    CliRun.of("purge", "--jdbc-url", "jdbc:postgresql://db:5432/app", "--user", "ops", "--retention", "-PT1H")
        .assertFails(2, "retention must not be negative, but was '-PT1H'");
  }
}
