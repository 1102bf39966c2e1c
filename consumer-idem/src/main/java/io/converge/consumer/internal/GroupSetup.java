package io.converge.consumer.internal;

import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.FailureClassifier;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageHandler;
import io.converge.consumer.MessageIdResolver;
import io.converge.consumer.Outcome;
import io.converge.consumer.TransactionRunner;
import io.converge.core.tracing.MessageSpan;
import io.converge.core.tracing.Tracing;
import java.sql.Connection;
import java.time.Clock;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * What the parts of one group's {@link IdempotentHandlerImpl} share: the group, its handler (run inside its
 * {@link HandlerScope} by {@link #handle}), the transactions, the id resolver, the failure policy and classifier,
 * the metrics, the clock, the {@link EnvelopeRules} and the tracing of the runs that do not come through
 * {@code TracedHandler} (a resume, a re-drive, a held message's release). Immutable.
 */
record GroupSetup(String group, MessageHandler handler, TransactionRunner tx, MessageIdResolver idResolver,
    FailurePolicy policy, FailureClassifier classifier, ConsumerMetrics metrics, Clock clock, EnvelopeRules rules,
    Tracing tracing, boolean traceAsParent) {

  /**
   * Runs the handler on {@code message}, whose resolved id is {@code id}, inside its {@link HandlerScope}: every way
   * into the handler passes here, so a schema the handler does not read never reaches it.
   *
   * @throws RejectedMessage when the rules refuse the message's schema; the handler did not run
   */
  void handle(Connection connection, IncomingMessage message, String id) throws Exception {
    rules.checkSchema(message);
    HandlerScope.run(group, id, handler, connection, message);
  }

  /**
   * Runs {@code run}, the second run of parked or held message {@code m} (row {@code dlqId}; {@code how}:
   * {@code resume}, {@code redrive} or {@code release}), in a CONSUMER span {@code "process {topic}"} that continues
   * the message's creation context as its first delivery did (linked, or a child with {@code traceAsParent}): the
   * context was stored with the dead letter's headers, so a re-drive days later is in the original trace. The span
   * carries {@code converge.redrive} and {@code converge.dlq.id} and is current while the handler runs.
   */
  Outcome again(IncomingMessage m, String how, long dlqId, Callable<Outcome> run) throws Exception {
    MessageSpan span = tracing.process(null, m.topic(), m.envelopeMessageId(), group, m.headers(), traceAsParent)
        .attribute("converge.redrive", how).attribute("converge.dlq.id", Long.toString(dlqId));
    try {
      Outcome outcome = run.call();
      span.attribute("converge.outcome", outcome.name().toLowerCase(Locale.ROOT));
      return outcome;
    } catch (Exception | Error e) {
      span.failed(e);
      throw e;
    } finally {
      span.close();
    }
  }
}
