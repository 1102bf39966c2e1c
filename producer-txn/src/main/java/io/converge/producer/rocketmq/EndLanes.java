package io.converge.producer.rocketmq;

import io.converge.producer.spi.ProducerMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the END requests of half messages off the caller's thread, one lane (a thread) per queue
 * group: the ENDs of one queue run one after another in submission order, each waiting for the
 * broker, so one key's messages keep their commit order, while the unit of work does not wait for
 * the broker round trip. ENDs are an optimisation: a full lane (a slow broker) drops the END rather
 * than block the submitter, who may still hold a DB connection, counted in {@code txn.ends.dropped};
 * a dropped END, or one that never runs (crash, close), is resolved by the check-back. Thread-safe.
 */
final class EndLanes implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EndLanes.class);
  private static final Runnable STOP = () -> {
  };

  private final List<BlockingQueue<Runnable>> lanes = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final List<AtomicBoolean> full = new ArrayList<>();
  private final String name;
  private final ProducerMetrics metrics;

  EndLanes(String name, int count, int capacity, ProducerMetrics metrics) {
    this.name = name;
    this.metrics = metrics;
    for (int i = 0; i < count; i++) {
      full.add(new AtomicBoolean());
      BlockingQueue<Runnable> lane = new LinkedBlockingQueue<>(capacity);
      Thread t = new Thread(() -> drain(lane), "converge-end-" + name + "-" + i);
      t.setDaemon(true);
      lanes.add(lane);
      threads.add(t);
      t.start();
    }
  }

  /**
   * Runs {@code end} after every END submitted before it with the same {@code queueKey}; never waits.
   *
   * @return false when the lane was full and {@code end} was dropped (and counted)
   */
  boolean submit(int queueKey, Runnable end) {
    int i = Math.floorMod(queueKey, lanes.size());
    if (lanes.get(i).offer(end)) {
      full.get(i).set(false);
      return true;
    }
    metrics.endDropped();
    if (full.get(i).compareAndSet(false, true)) {
      LOG.warn("END lane {} of group {} is full (the broker is slow): dropping ENDs, the check-back resolves them", i,
          name);
    }
    return false;
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
    Writers.stop(threads, grace);
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(5));
  }
}
