package io.converge.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class MessageIdsTest {

  @Test
  void theDayOfAnIdIsItsTimestampsUtcDayAndNoneForAForeignId() {
    Instant lastMilli = Instant.parse("2026-12-07T23:59:59.999Z");
    String id = new MessageIds(Clock.fixed(lastMilli, ZoneOffset.ofHours(9))).next();
    assertThat(MessageIds.dayOf(id)).isEqualTo(java.time.LocalDate.parse("2026-12-07"));
    assertThat(MessageIds.dayOf(new MessageIds(Clock.fixed(lastMilli.plusMillis(1), ZoneOffset.UTC)).next()))
        .isEqualTo(java.time.LocalDate.parse("2026-12-08"));
    assertThat(MessageIds.dayOf(UUID.randomUUID().toString())).as("v4").isNull();
    assertThat(MessageIds.dayOf("order-42")).isNull();
    assertThat(MessageIds.dayOf(null)).isNull();
  }

  @Test
  void idsOfOneMillisecondStayStrictlyIncreasing() {
    MessageIds ids = new MessageIds(Clock.fixed(Instant.ofEpochMilli(1_700_000_000_000L), ZoneOffset.UTC));
    List<String> generated = new ArrayList<>();
    for (int i = 0; i < 5000; i++) { // past the 4096 ids of one millisecond's counter
      generated.add(ids.next());
    }
    for (int i = 1; i < generated.size(); i++) {
      assertThat(generated.get(i).compareTo(generated.get(i - 1))).as("id %d", i).isPositive();
    }
  }

  @Test
  void generatorsOfTheSameMillisecondDrawDifferentRandomBits() {
    Clock clock = Clock.fixed(Instant.ofEpochMilli(1_700_000_000_000L), ZoneOffset.UTC);
    MessageIds one = new MessageIds(clock);
    MessageIds other = new MessageIds(clock); // another JVM: same millisecond, same counter
    for (int i = 0; i < 100; i++) {
      String a = one.next();
      String b = other.next();
      assertThat(a.substring(0, 18)).as("timestamp and counter").isEqualTo(b.substring(0, 18));
      assertThat(a).as("id %d", i).isNotEqualTo(b);
    }
  }

  @Test
  void idsAreVersion7WithTheTimestampInFront() {
    long millis = 1_700_000_000_123L;
    UUID id = UUID.fromString(new MessageIds(Clock.fixed(Instant.ofEpochMilli(millis), ZoneOffset.UTC)).next());
    assertThat(id.version()).isEqualTo(7);
    assertThat(id.variant()).isEqualTo(2);
    assertThat(id.getMostSignificantBits() >>> 16).isEqualTo(millis);
  }

  @Test
  void validity() {
    assertThat(MessageIds.isValid(UUID.randomUUID().toString())).isTrue();
    assertThat(MessageIds.isValid(null)).isFalse();
    assertThat(MessageIds.isValid("123")).isFalse();
    assertThat(MessageIds.isValid("zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz")).isFalse();
  }
}
