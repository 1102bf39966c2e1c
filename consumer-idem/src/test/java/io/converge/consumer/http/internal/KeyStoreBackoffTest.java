package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The pauses between attempts to store an answer, on the shared backoff: the ones computed by hand before. */
class KeyStoreBackoffTest {

  @Test
  void pausesDoubleFromAHundredMillisecondsUpToTwoSeconds() {
    long before = 100; // the hand-written rule it replaced: 100 ms, then min(2 s, pause · 2)
    for (int failures = 1; failures <= 30; failures++) {
      assertThat(KeyStore.COMPLETE_RETRY.ceiling(failures)).as("after failure %d", failures)
          .isEqualTo(Duration.ofMillis(before));
      before = Math.min(2_000, before * 2);
    }
    assertThat(KeyStore.COMPLETE_RETRY.ceiling(5)).isEqualTo(Duration.ofMillis(1600));
    assertThat(KeyStore.COMPLETE_RETRY.ceiling(6)).isEqualTo(Duration.ofSeconds(2));
  }
}
