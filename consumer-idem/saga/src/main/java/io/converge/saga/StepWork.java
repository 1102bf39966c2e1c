package io.converge.saga;

import io.converge.consumer.IncomingMessage;
import java.sql.Connection;

/**
 * A participant's work for one step (forward or compensation): business writes on {@code connection}, inside the
 * transaction that also stores the participant's reply and publishes it. Throw a
 * {@link io.converge.consumer.BusinessException} to refuse (its writes are rolled back, the refusal is stored and
 * replied as {@link ReplyClass#BUSINESS_FAILURE}); any other exception is a technical failure (nothing is stored,
 * {@link ReplyClass#TECHNICAL_FAILURE} is replied, the coordinator asks again with a new attempt).
 */
@FunctionalInterface
public interface StepWork {

  /**
   * Does the work; must not commit, roll back or close {@code connection}.
   *
   * @return the reply's payload (JSON by convention; empty is fine)
   */
  byte[] run(Connection connection, IncomingMessage command) throws Exception;
}
