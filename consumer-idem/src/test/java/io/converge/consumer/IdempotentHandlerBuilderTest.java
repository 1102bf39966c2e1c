package io.converge.consumer;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class IdempotentHandlerBuilderTest {

  @Test
  void validatesAtBuildNamingThePropertyAndValue() {
    assertThatThrownBy(() -> IdempotentHandler.builder().group("bad group").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("consumer.group must match")
        .hasMessageEndingWith("but was bad group");
    assertThatThrownBy(() -> IdempotentHandler.builder().group("g").build())
        .hasMessage("consumer.handler must be set, but was null");
    assertThatThrownBy(() -> IdempotentHandler.builder().group("g").handler((c, m) -> {
    }).build())
        .hasMessage("consumer.dataSource (or transactions) must be set, but was null");
  }

  @Test
  void dedupRetentionMustOutliveTheRedeliveryWindow() {
    assertThatThrownBy(() -> new DedupPurger(new org.postgresql.ds.PGSimpleDataSource(), Duration.ofHours(1), 100,
        java.time.Clock.systemUTC()))
        .hasMessageContaining("converge.consumer.dedup.retention must be at least PT6H")
        .hasMessageEndingWith("but was PT1H");
  }
}
