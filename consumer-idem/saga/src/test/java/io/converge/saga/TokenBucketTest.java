package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.saga.internal.TokenBucket;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class TokenBucketTest {

  @Test
  void givesTheBurstThenTheRateAndSaysHowLongToWait() {
    AtomicLong nanos = new AtomicLong();
    TokenBucket b = new TokenBucket(10, 3, nanos::get);
    for (int i = 0; i < 3; i++) {
      assertThat(b.tryAcquire()).isZero();
    }
    assertThat(b.tryAcquire()).isEqualTo(100_000_000L);
    int taken = 0;
    for (int ms = 0; ms < 10_000; ms++) { // 10 s in 1 ms ticks: 100 tokens, never more
      nanos.addAndGet(1_000_000L);
      if (b.tryAcquire() == 0) {
        taken++;
      }
    }
    assertThat(taken).isEqualTo(100);
    nanos.addAndGet(60_000_000_000L);
    int burst = 0;
    while (b.tryAcquire() == 0) {
      burst++;
    }
    assertThat(burst).as("saved up no more than the burst").isEqualTo(3);
  }
}
