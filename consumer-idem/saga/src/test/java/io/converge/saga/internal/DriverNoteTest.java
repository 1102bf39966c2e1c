package io.converge.saga.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DriverNoteTest {

  @Test
  void aNoteIsCutMarkedAndHoldsNoNul() {
    assertThat(Driver.note("refused")).isEqualTo("refused");
    assertThat(Driver.note("a\u0000b")).as("PostgreSQL's text refuses NUL").isEqualTo("a\\u0000b");
    String note = Driver.note("x".repeat(Driver.MAX_NOTE + 10));
    assertThat(note).startsWith("x".repeat(Driver.MAX_NOTE - 1) + "…")
        .endsWith(" [cut: " + (Driver.MAX_NOTE + 10) + " characters in all]");
  }
}
