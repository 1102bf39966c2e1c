package io.converge.producer.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.producer.spi.ProducerMetrics;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class EndLanesTest {

  @Test
  void endsOfOneQueueRunInSubmissionOrderOneAtATime() throws Exception {
    List<Integer> ran = new CopyOnWriteArrayList<>();
    try (EndLanes lanes = new EndLanes("t", 4, 100, ProducerMetrics.NONE)) {
      for (int i = 0; i < 50; i++) {
        int n = i;
        lanes.submit(7, () -> {
          sleepQuietly(n % 3); // uneven durations: a pool would reorder them
          ran.add(n);
        });
      }
      CountDownLatch done = new CountDownLatch(1);
      lanes.submit(7, done::countDown);
      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(ran).containsExactlyElementsOf(java.util.stream.IntStream.range(0, 50).boxed().toList());
  }

  @Test
  void closeLetsSubmittedEndsFinishAndAFailingEndDoesNotStopTheLane() throws Exception {
    List<Integer> ran = new CopyOnWriteArrayList<>();
    EndLanes lanes = new EndLanes("t", 2, 100, ProducerMetrics.NONE);
    lanes.submit(1, () -> {
      throw new IllegalStateException("broker refused");
    });
    for (int i = 0; i < 10; i++) {
      int n = i;
      lanes.submit(1, () -> ran.add(n));
    }
    lanes.close(Duration.ofSeconds(10));
    assertThat(ran).hasSize(10);
  }

  /**
   * Issue 13.13: the caller submits its ENDs while it may still hold a pooled DB connection (Spring's
   * afterCompletion); a slow broker must not stall it. A full lane drops the END (the check-back
   * resolves the half message) and counts it.
   */
  @Test
  void aFullLaneDropsTheEndWithoutBlockingTheCaller() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    List<String> ran = new CopyOnWriteArrayList<>();
    java.util.concurrent.atomic.AtomicInteger dropped = new java.util.concurrent.atomic.AtomicInteger();
    ProducerMetrics counting = new ProducerMetrics() {

      @Override
      public void endDropped() {
        dropped.incrementAndGet();
      }
    };
    try (EndLanes lanes = new EndLanes("t", 1, 1, counting)) {
      CountDownLatch taken = new CountDownLatch(1);
      submit(lanes, 0, () -> {
        taken.countDown();
        Latches.awaitQuietly(release, Duration.ofSeconds(10)); // a broker that does not answer
      });
      assertThat(taken.await(10, TimeUnit.SECONDS)).isTrue();
      submit(lanes, 0, () -> ran.add("queued")); // fills the one slot
      java.util.concurrent.CompletableFuture<Void> caller = java.util.concurrent.CompletableFuture.runAsync(() -> {
        try {
          submit(lanes, 0, () -> ran.add("dropped"));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      try {
        caller.get(5, TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        throw new AssertionError("the caller was blocked by a full END lane for 5 s");
      } finally {
        release.countDown();
      }
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> ran.contains("queued"));
    } // close drains the lane: a dropped END would have run by now
    assertThat(ran).containsExactly("queued");
    assertThat(dropped).hasValue(1);
  }

  private static void submit(EndLanes lanes, int key, Runnable end) throws Exception {
    lanes.submit(key, end);
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
