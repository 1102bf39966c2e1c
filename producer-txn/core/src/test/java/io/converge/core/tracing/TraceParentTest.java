package io.converge.core.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.tracing.internal.TraceParent;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The W3C rules for {@code traceparent}: what is accepted, and every malformed value refused. */
class TraceParentTest {

  static final String VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

  @Test
  void parsesAValidHeaderAndWritesItBack() {
    TraceParent p = TraceParent.parse(VALID);
    assertThat(p.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    assertThat(p.spanId()).isEqualTo("00f067aa0ba902b7");
    assertThat(p.flags()).isEqualTo((byte) 1);
    assertThat(p.header()).isEqualTo(VALID);
  }

  @Test
  void aLaterVersionMayCarryMoreFields() {
    assertThat(TraceParent.parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-abc")).isNotNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0", // too short
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-011", // version 00 is exactly 55 characters
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", // a later version's extra field needs a '-'
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", // upper-case hex
      "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", // not hex
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz", // flags not hex
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // version ff
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01", // all-zero trace id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", // all-zero parent id
      "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // separator
  })
  void refusesMalformedHeaders(String header) {
    assertThat(TraceParent.parse(header)).isNull();
  }

  @Test
  void absentIsNull() {
    assertThat(TraceParent.parse(null)).isNull();
  }
}
