package io.converge.producer.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which errors of a unit's last write + COMMIT (one round trip) committed nothing: only a refusal of the whole
 * transaction. An error that may come after the COMMIT ran leaves the outcome unknown, so the unit's messages
 * are resolved from the log instead of being rolled back on the broker (review finding: 57P01 from a shutdown
 * or {@code pg_terminate_backend} can follow a COMMIT that succeeded).
 */
class CommitRefusalTest {

  @ParameterizedTest
  @CsvSource({
      "23505, true", "22012, true", "25P02, true", "40001, true", "40P01, true", "42P01, true", "44000, true",
      "55P03, true", "57014, false", "55000, false",
      "08006, false", "08003, false", "57P01, false", "57P02, false", "XX000, false", "58030, false",
      "53100, false", "'', false"})
  void onlyARefusalOfTheWholeTransactionCommittedNothing(String sqlState, boolean refused) {
    assertThat(UnitContext.refusedBeforeCommit(sqlState)).as(sqlState).isEqualTo(refused);
  }

  @org.junit.jupiter.api.Test
  void anErrorWithoutStateIsUnknown() {
    assertThat(UnitContext.refusedBeforeCommit(null)).isFalse();
  }
}
