package io.converge.producer.rocketmq;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds out, off the END lanes, whether an END that failed on the client reached the broker after all (its answer
 * lost: a timeout, a dropped connection), so that its {@code converge_txn_end} row is resolved: the broker checks
 * back only half messages without an END, so an END it applied is never checked back and its row would stay
 * waiting. An END COMMIT is never sent again: the broker (5.4.0, {@code EndTransactionProcessor}) looks the half
 * message up by its commit-log offset without asking whether it was already ended, so a second END COMMIT would
 * write the real message twice. Instead the real message is looked up in its topic by its unique key (the broker
 * indexes it when the END COMMIT writes it): found, the row is resolved; not found, the check-back resolves it (the
 * END did not arrive). An END ROLLBACK is sent again: a second one only marks the half message ended once more. A
 * few tries, 1 s, 5 s and 30 s after the failure; beyond {@value #MAX_PENDING} under way, or once closed, a failed
 * END is left to the check-back. Thread-safe.
 */
final class FailedEnds implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(FailedEnds.class);
  private static final List<Duration> TRIES = List.of(Duration.ofSeconds(1), Duration.ofSeconds(5),
      Duration.ofSeconds(30));
  private static final int MAX_PENDING = 1_000;

  private final TransactionMQProducer producer;
  private final SyncEndTransaction ender;
  private final EndRecorder recorder;
  private final ScheduledExecutorService executor;
  private final AtomicInteger pending = new AtomicInteger();

  FailedEnds(TransactionMQProducer producer, SyncEndTransaction ender, EndRecorder recorder, String group) {
    this.producer = producer;
    this.ender = ender;
    this.recorder = recorder;
    this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "converge-end-followup-" + group);
      t.setDaemon(true);
      return t;
    });
  }

  /** END {@code state} of {@code msg} (sent as {@code result}, recorded as {@code half}) failed on the client. */
  void follow(Message msg, SendResult result, LocalTransactionState state, EndRecorder.Half half) {
    if (pending.incrementAndGet() > MAX_PENDING || !schedule(new FollowUp(msg, result, state, half), 0)) {
      pending.decrementAndGet();
      LOG.debug("Not following the failed END of half message {}: the check-back resolves it", half.id());
    }
  }

  private boolean schedule(FollowUp f, int attempt) {
    try {
      executor.schedule(() -> run(f, attempt), TRIES.get(attempt).toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (RejectedExecutionException e) {
      return false; // closing
    }
  }

  private void run(FollowUp f, int attempt) {
    boolean arrived;
    try {
      arrived = arrived(f);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      pending.decrementAndGet();
      return;
    } catch (Exception e) {
      LOG.debug("Following the failed END of half message {} ({}): {}", f.half().id(), f.state(), e.toString());
      arrived = false;
    }
    if (arrived) {
      LOG.info("The END {} of half message {} reached the broker after all", f.state(), f.half().id());
      recorder.resolved(f.half(), f.state() == LocalTransactionState.COMMIT_MESSAGE ? "COMMIT" : "ROLLBACK");
    } else if (attempt + 1 < TRIES.size() && schedule(f, attempt + 1)) {
      return;
    }
    pending.decrementAndGet();
  }

  private boolean arrived(FollowUp f) throws Exception {
    if (f.state() == LocalTransactionState.ROLLBACK_MESSAGE) {
      ender.end(f.msg(), f.result(), f.state());
      return true;
    }
    try {
      return producer.getDefaultMQProducerImpl().queryMessageByUniqKey(f.msg().getTopic(),
          f.result().getMsgId()) != null;
    } catch (org.apache.rocketmq.client.exception.MQClientException e) {
      return false; // the client's "no message found"
    }
  }

  /** Drops the follow-ups not run yet: the check-back resolves their half messages. */
  @Override
  public void close() {
    executor.shutdownNow();
  }

  private record FollowUp(Message msg, SendResult result, LocalTransactionState state, EndRecorder.Half half) {
  }
}
