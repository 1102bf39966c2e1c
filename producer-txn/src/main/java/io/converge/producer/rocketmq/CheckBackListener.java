package io.converge.producer.rocketmq;

import io.converge.core.Envelope;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.internal.CrashPoints;
import io.converge.producer.internal.TxnLog;
import java.time.Duration;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers the broker's check-backs from the transaction log, so that any live instance of the group
 * answers for one that died. Thread-safe.
 *
 * @param context the producer group's data source, log and metrics
 * @param recorder where each check-back's answer and reason are recorded ({@code converge_txn_end})
 */
record CheckBackListener(BackendContext context, EndRecorder recorder) implements TransactionListener {

  private static final Logger LOG = LoggerFactory.getLogger(CheckBackListener.class);

  /** Not used: Converge sends half messages itself and ends them after the DB commit. */
  @Override
  public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
    return LocalTransactionState.UNKNOW;
  }

  @Override
  public LocalTransactionState checkLocalTransaction(MessageExt msg) {
    String id = msg.getUserProperty(Envelope.MESSAGE_ID);
    if (id == null) {
      LOG.warn("Check-back for a half message without {} (msgId {}) in group {}: UNKNOWN", Envelope.MESSAGE_ID,
          msg.getMsgId(), context.group());
      context.metrics().checkBack("UNKNOWN");
      return LocalTransactionState.UNKNOW;
    }
    CrashPoints.pass(CrashPoints.Point.CHECK_BACK);
    Duration age = age(msg);
    TxnLog.Outcome outcome = context.log().resolve(id, msg.getUserProperty(HalfMessageTransaction.ATTEMPT),
        context.group(), msg.getTopic(), age,
        context.localTransactionTimeout());
    LocalTransactionState answer = switch (outcome) {
      case COMMITTED -> LocalTransactionState.COMMIT_MESSAGE;
      case ROLLED_BACK -> LocalTransactionState.ROLLBACK_MESSAGE;
      case UNKNOWN, PAST_RETENTION -> LocalTransactionState.UNKNOW;
    };
    if (outcome == TxnLog.Outcome.PAST_RETENTION) {
      context.metrics().checkBackPastRetention();
    }
    LOG.debug("Check-back of message {} (age {}) in group {}: {}", id, age, context.group(), answer);
    record(msg, id, outcome, age);
    context.metrics().checkBack(outcome == TxnLog.Outcome.COMMITTED ? "COMMIT"
        : outcome == TxnLog.Outcome.ROLLED_BACK ? "ROLLBACK" : "UNKNOWN");
    return answer;
  }

  /**
   * Records the check-back (the broker checks only half messages without an END): COMMIT or ROLLBACK resolves
   * its row, UNKNOWN leaves it waiting; past the retention the ticket already says it.
   */
  private void record(MessageExt msg, String id, TxnLog.Outcome outcome, Duration age) {
    if (outcome == TxnLog.Outcome.PAST_RETENTION) {
      return;
    }
    String answer = outcome == TxnLog.Outcome.COMMITTED ? "COMMIT"
        : outcome == TxnLog.Outcome.ROLLED_BACK ? "ROLLBACK" : "UNKNOWN";
    String reason = outcome == TxnLog.Outcome.UNKNOWN
        ? "no END yet, and the check-back found no log row: its unit has not committed (younger than the local"
            + " transaction timeout), or the log could not be read"
        : "no END reached the broker (a crash after the DB commit, or an END lost): found by its check-back";
    recorder.checkedBack(HalfMessageTransaction.half(msg, id, msg.getUserProperty(HalfMessageTransaction.ATTEMPT)),
        answer, reason, context.clock().instant().minus(age));
  }

  /** Since the message was created: its envelope's creation time, or the half message's born time if older. */
  private Duration age(MessageExt msg) {
    long created = msg.getBornTimestamp();
    String header = msg.getUserProperty(Envelope.CREATED_AT);
    if (header != null) {
      try {
        created = Math.min(created, Long.parseLong(header));
      } catch (NumberFormatException e) {
        LOG.debug("Half message {} has a malformed {}: {}", msg.getMsgId(), Envelope.CREATED_AT, header);
      }
    }
    return Duration.ofMillis(Math.max(0, context.clock().millis() - created));
  }
}
