package io.converge.consumer.internal;

import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.FailureClassifier;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageHandler;
import io.converge.consumer.MessageIdResolver;
import io.converge.consumer.TransactionRunner;
import java.sql.Connection;
import java.time.Clock;

/**
 * What the parts of one group's {@link IdempotentHandlerImpl} share: the group, its handler (run inside its
 * {@link HandlerScope} by {@link #handle}), the transactions, the id resolver, the failure policy and classifier,
 * the metrics, the clock and the {@link EnvelopeRules}. Immutable.
 */
record GroupSetup(String group, MessageHandler handler, TransactionRunner tx, MessageIdResolver idResolver,
    FailurePolicy policy, FailureClassifier classifier, ConsumerMetrics metrics, Clock clock, EnvelopeRules rules) {

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
}
