package io.converge.producer.rocketmq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the END requests of half messages off the caller's thread, one lane (a thread) per queue
 * group: the ENDs of one queue run one after another in submission order, each waiting for the
 * broker, so one key's messages keep their commit order, while the unit of work does not wait for
 * the broker round trip. A full lane blocks the submitter (back-pressure); an END that never runs
 * (crash, close) is resolved by the check-back. Thread-safe.
 */
final class EndLanes implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EndLanes.class);
  private static final Runnable STOP = () -> {};

  private final List<BlockingQueue<Runnable>> lanes = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();

  EndLanes(String name, int count, int capacity) {
    for (int i = 0; i < count; i++) {
      BlockingQueue<Runnable> lane = new LinkedBlockingQueue<>(capacity);
      Thread t = new Thread(() -> drain(lane), "converge-end-" + name + "-" + i);
      t.setDaemon(true);
      lanes.add(lane);
      threads.add(t);
      t.start();
    }
  }

  /** Runs {@code end} after every END submitted before it with the same {@code queueKey}. */
  void submit(int queueKey, Runnable end) throws InterruptedException {
    lanes.get(Math.floorMod(queueKey, lanes.size())).put(end);
  }

  private static void drain(BlockingQueue<Runnable> lane) {
    while (true) {
      Runnable r;
      try {
        r = lane.take();
      } catch (InterruptedException e) {
        return;
      }
      if (r == STOP) {
        return;
      }
      try {
        r.run();
      } catch (RuntimeException e) {
        LOG.warn("END request failed: {}", e.toString());
      }
    }
  }

  /** Lets the submitted ENDs finish, waiting at most {@code grace}; the rest is left to the check-back. */
  void close(Duration grace) {
    for (BlockingQueue<Runnable> lane : lanes) {
      if (!lane.offer(STOP)) {
        lane.clear();
        lane.offer(STOP);
      }
    }
    long deadline = System.nanoTime() + grace.toNanos();
    for (Thread t : threads) {
      try {
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      t.interrupt();
    }
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(5));
  }
}
