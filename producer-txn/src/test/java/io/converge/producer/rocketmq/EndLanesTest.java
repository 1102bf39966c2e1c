package io.converge.producer.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;

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
    try (EndLanes lanes = new EndLanes("t", 4, 100)) {
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
    EndLanes lanes = new EndLanes("t", 2, 100);
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

  @Test
  void aFullLaneMakesTheSubmitterWait() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    try (EndLanes lanes = new EndLanes("t", 1, 1)) {
      lanes.submit(0, () -> awaitQuietly(release)); // taken by the lane thread
      waitUntilTaken(lanes);
      lanes.submit(0, () -> {});                      // fills the one slot
      Thread submitter = new Thread(() -> {
        try {
          lanes.submit(0, () -> {});
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      submitter.start();
      submitter.join(300);
      assertThat(submitter.isAlive()).as("blocked on the full lane").isTrue();
      release.countDown();
      submitter.join(5000);
      assertThat(submitter.isAlive()).isFalse();
    }
  }

  private static void waitUntilTaken(EndLanes lanes) throws InterruptedException {
    Thread.sleep(100); // the lane thread takes the first END almost at once
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
