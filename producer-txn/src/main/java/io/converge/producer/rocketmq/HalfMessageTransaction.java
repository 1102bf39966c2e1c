package io.converge.producer.rocketmq;

import io.converge.core.rocketmq.KeyQueueSelector;
import io.converge.core.rocketmq.RocketMQErrors;
import io.converge.core.BrokerUnavailableException;
import io.converge.core.Envelope;
import io.converge.core.InvalidMessageException;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.CommitWrite;
import io.converge.producer.internal.CrashPoints;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageConst;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The half messages of one unit of work: sent at {@code publish}, their log rows written before the DB
 * commit (the last one in the commit's round trip), ended after it through the END lanes. Used by one
 * thread.
 */
final class HalfMessageTransaction implements BackendTransaction {

  private static final Logger LOG = LoggerFactory.getLogger(HalfMessageTransaction.class);
  /**
   * The user property naming the attempt of a half message: a random token per publish, stored in its
   * log row, so that a check-back matches the exact attempt (issue 13.10), not only the message id.
   */
  static final String ATTEMPT = "converge-attempt";

  private final TransactionMQProducer producer;
  private final SyncEndTransaction ender;
  private final EndLanes lanes;
  private final EndRecorder recorder;
  private final FailedEnds failedEnds;
  private final BackendContext context;
  private final List<Pending> pending = new ArrayList<>();

  HalfMessageTransaction(TransactionMQProducer producer, SyncEndTransaction ender, EndLanes lanes,
      EndRecorder recorder, FailedEnds failedEnds, BackendContext context) {
    this.producer = producer;
    this.ender = ender;
    this.lanes = lanes;
    this.recorder = recorder;
    this.failedEnds = failedEnds;
    this.context = context;
  }

  /**
   * Sends {@code m} as a half message; its log row is written in {@link #beforeCommit} (the last one in
   * the commit's round trip).
   */
  @Override
  public void publish(OutgoingMessage m, Connection connection) throws Exception {
    if (m.payload().length == 0) {
      throw new InvalidMessageException(
          "RocketMQ refuses an empty payload (message " + m.id() + " on " + m.topic() + ")", m.id(), null);
    }
    Message msg = OutgoingMessages.toMessage(m, context.group(), context.clock().millis());
    String attempt = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
    msg.putUserProperty(ATTEMPT, attempt);
    MessageAccessor.putProperty(msg, MessageConst.PROPERTY_TRANSACTION_PREPARED, "true");
    MessageAccessor.putProperty(msg, MessageConst.PROPERTY_PRODUCER_GROUP, context.group());
    long start = System.nanoTime();
    SendResult result;
    try {
      // synchronous: the client's asynchronous send was acknowledged 10 times slower on a loaded machine
      // (converge bench, JFR), and in the usual unit (business writes, then publish) it could overlap
      // only the log row, which must follow the acknowledgement: a check-back must be able to fence a
      // prepared half message whose unit stalls (its row would hold the fence off until the unit ends)
      result = m.key() != null ? producer.send(msg, KeyQueueSelector.BY_KEY, m.key()) : producer.send(msg);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BrokerUnavailableException("Interrupted while sending half message " + m.id(), m.id(), e);
    } catch (Exception e) {
      throw RocketMQErrors.classify(e, "half message", m.id(), m.topic(), RocketMQErrors.brokersRegistered(producer));
    }
    context.metrics().sent(Duration.ofNanos(System.nanoTime() - start));
    Pending p = new Pending(msg, result, m.id(), m.topic(), attempt, start);
    if (!RocketMQErrors.acknowledged(result.getSendStatus())) {
      // a publish that failed is not part of the unit, even if the application goes on (savepoint)
      submit(p, LocalTransactionState.ROLLBACK_MESSAGE);
      throw RocketMQErrors.notAcknowledged(result, "half message", m.id(), m.topic());
    }
    pending.add(p);
    CrashPoints.pass(CrashPoints.Point.AFTER_BROKER_PREPARE);
  }

  /**
   * Writes the log rows of all half messages but the last, which {@link #commitWrite()} leaves to the
   * commit's round trip. (Each row follows its message's acknowledgement, never precedes it: a
   * check-back must be able to fence a prepared half message whose unit stalls, and a row of the open
   * transaction would hold the fence off until the unit ends.)
   */
  @Override
  public void beforeCommit(Connection connection) throws Exception {
    for (Pending p : pending.subList(0, pending.size() - 1)) {
      context.log().recordCommitted(connection, p.id(), p.attempt(), context.group(), p.topic());
    }
  }

  @Override
  public CommitWrite commitWrite() {
    Pending last = pending.get(pending.size() - 1);
    return context.log().committedWrite(last.id(), last.attempt(), context.group(), last.topic());
  }

  /**
   * Ends the half messages published after the first {@code kept} with ROLLBACK now: their log rows
   * are gone with the savepoint, so a check-back answers ROLLBACK for them too, and
   * {@link #afterCommit()} commits only the kept ones.
   */
  @Override
  public void rollbackToSavepoint(int kept) {
    List<Pending> discarded = pending.subList(kept, pending.size());
    for (Pending p : discarded) {
      submit(p, LocalTransactionState.ROLLBACK_MESSAGE);
    }
    LOG.debug("Rolled back {} half messages after a savepoint in group {}", discarded.size(), context.group());
    discarded.clear();
  }

  @Override
  public void afterCommit() {
    end(LocalTransactionState.COMMIT_MESSAGE);
  }

  @Override
  public void afterRollback() {
    end(LocalTransactionState.ROLLBACK_MESSAGE);
  }

  // The ENDs of one queue go through one lane, in order: the broker writes the real message at END
  // COMMIT, so this keeps a key's messages in commit order without making the caller wait.
  private void end(LocalTransactionState state) {
    for (Pending p : pending) {
      submit(p, state);
    }
  }

  private void submit(Pending p, LocalTransactionState state) {
    if (!lanes.submit(p.result().getMessageQueue().hashCode(), () -> endNow(p, state))) {
      LOG.debug("END {} of half message {} dropped (lane full); the check-back will resolve it", state, p.id());
      notDelivered(p, state, "END " + name(state) + " dropped: its END lane was full (the broker was slow)");
    }
  }

  private void endNow(Pending p, LocalTransactionState state) {
    try {
      CrashPoints.pass(CrashPoints.Point.BROKER_END);
      ender.end(p.message(), p.result(), state);
      CrashPoints.pass(CrashPoints.Point.BROKER_END_ANSWERED);
      // a unit a check-back found open (its answer UNKNOWN) is resolved now, whichever instance recorded it
      recorder.ended(half(p.message(), p.id(), p.attempt()), name(state),
          Duration.ofNanos(System.nanoTime() - p.sentNanos()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      LOG.warn("Interrupted ending half message {} with {}; the check-back will resolve it", p.id(), state);
      notDelivered(p, state, "END " + name(state) + " interrupted (the producer was closing)");
    } catch (Exception e) {
      LOG.warn("Could not end half message {} with {} ({}); the check-back will resolve it", p.id(), state,
          e.toString());
      notDelivered(p, state, "END " + name(state) + " failed: " + e);
      // the broker may have applied it all the same (its answer lost)
      failedEnds.follow(p.message(), p.result(), state, half(p.message(), p.id(), p.attempt()));
    }
  }

  // off the unit's path: a dropped END only queues its record, a failed one runs on its END lane
  private void notDelivered(Pending p, LocalTransactionState state, String reason) {
    recorder.notDelivered(half(p.message(), p.id(), p.attempt()), name(state), reason, context.clock().instant());
  }

  /** The row's names of half message {@code msg}: its key and tenant are its envelope's. */
  static EndRecorder.Half half(Message msg, String id, String attempt) {
    return new EndRecorder.Half(id, msg.getTopic(), msg.getUserProperty(Envelope.KEY),
        msg.getUserProperty(Envelope.TENANT), attempt);
  }

  private static String name(LocalTransactionState state) {
    return state == LocalTransactionState.COMMIT_MESSAGE ? "COMMIT" : "ROLLBACK";
  }

  /**
   * A half message the broker stored (its send started at {@code sentNanos}: the broker's age of it can only be
   * smaller), and what its log row needs.
   */
  private record Pending(Message message, SendResult result, String id, String topic, String attempt,
      long sentNanos) {
  }
}
