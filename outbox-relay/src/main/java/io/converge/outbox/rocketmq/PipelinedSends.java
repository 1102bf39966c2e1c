package io.converge.outbox.rocketmq;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.SendAllResult;
import io.converge.core.BrokerUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One batch sent as one chain of asynchronous sends per order key: a key's next record is sent only when
 * the broker stored the previous one (async sends to one queue are not guaranteed to arrive in order: the
 * client hands them to a thread pool), so the key's order holds and nothing of a key is sent after its
 * failure. The chains of different keys run concurrently, so a batch costs about as many round trips as
 * its longest chain. A chain also stops before a topic another chain just found unavailable. One use per
 * batch; thread-safe internally.
 */
final class PipelinedSends {

  /** Sends one record without waiting and reports null (stored) or the classified failure. */
  interface AsyncSend {

    void send(OutboxRecord record, Consumer<RuntimeException> done);
  }

  private static final Logger LOG = LoggerFactory.getLogger(PipelinedSends.class);

  private final AsyncSend send;
  private final Queue<OutboxRecord> sent = new ConcurrentLinkedQueue<>();
  private final Queue<SendAllResult.Failure> failed = new ConcurrentLinkedQueue<>();
  private final Set<String> unreachableTopics = ConcurrentHashMap.newKeySet();
  private volatile boolean cancelled;

  private PipelinedSends(AsyncSend send) {
    this.send = send;
  }

  /**
   * Sends {@code records} and waits for every chain, at most {@code sendTimeout} plus a margin per record
   * of the longest chain (the client times every send out itself; this bound only guards against a lost
   * callback). Records whose outcome is unknown at that point, or when the thread is interrupted, are
   * reported as neither sent nor failed: they stay unpublished and may be sent twice (same message id).
   */
  static SendAllResult sendAll(List<OutboxRecord> records, AsyncSend send, Duration sendTimeout) {
    return new PipelinedSends(send).run(records, sendTimeout);
  }

  private SendAllResult run(List<OutboxRecord> records, Duration sendTimeout) {
    Map<String, List<OutboxRecord>> byKey = new LinkedHashMap<>();
    for (OutboxRecord r : records) {
      byKey.computeIfAbsent(r.orderKey(), k -> new ArrayList<>()).add(r);
    }
    CountDownLatch done = new CountDownLatch(byKey.size());
    int longest = 0;
    for (List<OutboxRecord> chain : byKey.values()) {
      longest = Math.max(longest, chain.size());
      new Chain(chain, done).next();
    }
    long waitMillis = (sendTimeout.toMillis() + 2_000) * longest;
    try {
      if (!done.await(waitMillis, TimeUnit.MILLISECONDS)) {
        LOG.warn("{} of {} send chains unfinished after {} ms; their records stay unpublished", done.getCount(),
            byKey.size(), waitMillis);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    cancelled = true;
    List<OutboxRecord> sentNow = new ArrayList<>(sent);
    sentNow.sort(Comparator.comparingLong(OutboxRecord::seq));
    List<SendAllResult.Failure> failedNow = new ArrayList<>(failed);
    failedNow.sort(Comparator.comparingLong(f -> f.record().seq()));
    return new SendAllResult(sentNow, failedNow);
  }

  /** The records of one key, sent one after the other. */
  private final class Chain {

    private final List<OutboxRecord> records;
    private final CountDownLatch done;
    private int next;

    Chain(List<OutboxRecord> records, CountDownLatch done) {
      this.records = records;
      this.done = done;
    }

    void next() {
      if (cancelled || next == records.size()) {
        done.countDown();
        return;
      }
      OutboxRecord r = records.get(next);
      if (unreachableTopics.contains(r.topic())) {
        done.countDown(); // no second timeout on a topic whose broker just failed
        return;
      }
      send.send(r, error -> {
        if (error == null) {
          if (!cancelled) {
            sent.add(r);
          }
          next++;
          next();
        } else {
          if (error instanceof BrokerUnavailableException) {
            unreachableTopics.add(r.topic());
          }
          failed.add(new SendAllResult.Failure(r, error));
          done.countDown();
        }
      });
    }
  }
}
