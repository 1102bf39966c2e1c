package io.converge.consumer.internal;

import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.FailureClassifier;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.MessageHandler;
import io.converge.consumer.MessageIdResolver;
import io.converge.consumer.TransactionRunner;
import java.time.Clock;

/**
 * What the parts of one group's {@link IdempotentHandlerImpl} share: the group, its handler (wrapped in its
 * {@link HandlerScope}), the transactions, the id resolver, the failure policy and classifier, the metrics and the
 * clock. Immutable.
 */
record GroupSetup(String group, MessageHandler handler, TransactionRunner tx, MessageIdResolver idResolver,
    FailurePolicy policy, FailureClassifier classifier, ConsumerMetrics metrics, Clock clock) {
}
