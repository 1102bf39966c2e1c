package io.converge.consumer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The signed-callback filter's settings and builder: defaults, and every invalid value named with its property. */
class CallbackSettingsTest {

  @Test
  void defaults() {
    CallbackSettings d = CallbackSettings.defaults();
    assertThat(d.signatureHeader()).isEqualTo("Converge-Signature");
    assertThat(d.tolerance()).isEqualTo(Duration.ofMinutes(5));
    assertThat(d.replayWindow()).isEqualTo(Duration.ofHours(24));
    assertThat(d.maxBodyBytes()).isEqualTo(1 << 20);
  }

  @Test
  void invalidValuesAreRefusedNamingTheProperty() {
    CallbackSettings d = CallbackSettings.defaults();
    assertThatThrownBy(() -> d.withSignatureHeader("Bad Header"))
        .hasMessage("converge.callback.signature-header must be a header name, but was 'Bad Header'");
    assertThatThrownBy(() -> d.withTolerance(Duration.ofHours(2)))
        .hasMessage("converge.callback.tolerance must be between 1s and 1h, but was PT2H");
    assertThatThrownBy(() -> d.withMaxBodyBytes(0))
        .hasMessage("converge.callback.max-body-size must be between 1 B and 64 MiB, but was 0 bytes");
    // a timestamp is accepted for twice the tolerance: a shorter window would let a late copy run again
    assertThatThrownBy(() -> new CallbackSettings("H", Duration.ofMinutes(30), Duration.ofMinutes(60), 10))
        .hasMessage("converge.callback.replay-window must be longer than twice the tolerance (PT30M) and than 1m, "
            + "but was PT1H");
  }

  @Test
  void theBuilderRefusesAMissingOrMalformedProvider() {
    SignedCallbackFilterBuilder b = SignedCallbackFilter.builder()
        .dataSource(new org.postgresql.ds.PGSimpleDataSource())
        .secrets(CallbackSecrets.of("s")).endpoints(List.of(IdempotentEndpoint.of("POST", "/cb")));
    assertThatThrownBy(b::build).hasMessage("converge.callback.provider must be 1 to 40 of A-Z a-z 0-9 . _ -, but was "
        + "'null'");
    assertThatThrownBy(() -> b.provider("a b").build()).hasMessageContaining("but was 'a b'");
    assertThatThrownBy(() -> CallbackSecrets.of(" ")).hasMessage("converge.callback.secrets must not be blank, but was "
        + "a blank secret");
  }
}
