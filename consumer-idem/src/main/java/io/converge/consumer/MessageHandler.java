package io.converge.consumer;

import java.sql.Connection;

/**
 * The user's handler: does its business writes on {@code connection}, which is inside the
 * transaction that also holds the message's dedup claim. It must not commit, roll back or close
 * the connection. Throw {@link BusinessException} for a business refusal, {@link MoneyAnomalyException}
 * for an amount or currency mismatch; anything else is classified by the {@link FailureClassifier}.
 */
@FunctionalInterface
public interface MessageHandler {

  /** Handles one message. Called at most once per committed outcome of a message id. */
  void handle(Connection connection, IncomingMessage message) throws Exception;
}
