package io.converge.consumer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

class IdempotencySettingsTest {

  private static final IdempotencySettings D = IdempotencySettings.defaults();

  @Test
  void defaultsAreTheDocumentedOnes() {
    assertThat(D.ttl()).isEqualTo(Duration.ofHours(24));
    assertThat(D.lease()).isEqualTo(Duration.ofMinutes(1));
    assertThat(D.keyHeader()).isEqualTo("Idempotency-Key");
    assertThat(D.maxBodyBytes()).isEqualTo(1 << 20);
    assertThat(D.maxResponseBytes()).isEqualTo(1 << 20);
    assertThat(D.replayedHeaders()).contains("Content-Type", "Location");
    IdempotentEndpoint e = IdempotentEndpoint.of("post", "/orders/**");
    assertThat(e.method()).isEqualTo("POST");
    assertThat(e.required()).isTrue();
    assertThat(e.expectedDuration()).isEqualTo(Duration.ofSeconds(2));
    assertThat(e).hasToString("POST /orders/**");
  }

  @Test
  void badSettingsNameThePropertyAndTheValue() {
    assertThatThrownBy(() -> new IdempotencySettings(Duration.ofSeconds(30), D.lease(), D.keyHeader(), null, null, 10))
        .hasMessage("converge.idempotency.ttl must be at least 1m and longer than the lease (PT1M), but was PT30S");
    assertThatThrownBy(() -> new IdempotencySettings(D.ttl(), Duration.ofMillis(500), D.keyHeader(), null, null, 10))
        .hasMessage("converge.idempotency.lease must be at least 1s, but was PT0.5S");
    assertThatThrownBy(() -> new IdempotencySettings(D.ttl(), D.lease(), "Idempotency Key", null, null, 10))
        .hasMessage("converge.idempotency.key-header must be a header name, but was 'Idempotency Key'");
    assertThatThrownBy(() -> new IdempotencySettings(D.ttl(), D.lease(), D.keyHeader(), null, null, 0))
        .hasMessage("converge.idempotency.max-body-size must be between 1 B and 64 MiB, but was 0 bytes");
    assertThatThrownBy(() -> D.withMaxResponseBytes(0))
        .hasMessage("converge.idempotency.max-response-size must be between 1 B and 64 MiB, but was 0 bytes");
    assertThatThrownBy(() -> D.withMaxResponseBytes((64 << 20) + 1))
        .hasMessage("converge.idempotency.max-response-size must be between 1 B and 64 MiB, but was 67108865 bytes");
  }

  @Test
  void badEndpointsAreRefusedQuotingTheValue() {
    assertThatThrownBy(() -> IdempotentEndpoint.of("PO ST", "/x")).hasMessageContaining("but was 'PO ST'");
    assertThatThrownBy(() -> IdempotentEndpoint.of("POST", "x")).hasMessageContaining("but was 'x'");
    assertThatThrownBy(() -> IdempotentEndpoint.of("POST", "/x").withExpectedDuration(Duration.ZERO))
        .hasMessage("endpoint POST /x: expected-duration must be positive, but was PT0S");
    // issue 31.5: an endpoint (for the builder, or configured) whose pattern the filter cannot read is not made
    assertThatThrownBy(() -> IdempotentEndpoint.of("POST", "/charges/{id")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("path pattern '/charges/{id' cannot be compiled (Spring MVC's syntax): ");
    assertThatThrownBy(() -> IdempotentEndpoint.of("POST", "/orders/**/items"))
        .hasMessageContaining("should be placed at the start or end of the pattern");
  }

  @Test
  void theBuilderNamesWhatIsMissingAndRefusesAnEndpointSlowerThanTheLease() {
    assertThatThrownBy(
        () -> IdempotencyFilter.builder().tenantResolver(TenantResolver.fixed("t")).endpoints(List.of()).build())
        .isInstanceOf(NullPointerException.class).hasMessage("dataSource");
    assertThatThrownBy(() -> IdempotencyFilter.builder().dataSource(new PGSimpleDataSource())
        .tenantResolver(TenantResolver.fixed("t"))
        .endpoints(List.of(IdempotentEndpoint.of("POST", "/slow").withExpectedDuration(Duration.ofMinutes(2)))).build())
        .hasMessage(
            "endpoint POST /slow: expected-duration must be shorter than converge.idempotency.lease (PT1M), but was PT2M");
    assertThatThrownBy(() -> TenantResolver.header(" ")).hasMessageContaining("but was ' '");
  }
}
