package io.converge.saga.tcc;

import io.converge.consumer.IncomingMessage;
import java.sql.Connection;

/**
 * A {@link TccParticipant}'s business work for one operation of a branch, given the command message (its payload is
 * the branch's data). Throw a {@link io.converge.consumer.BusinessException} from a Try to refuse it (nothing is
 * stored; replied as a business failure); any other exception is a technical failure.
 */
@FunctionalInterface
public interface TccWork {

  /**
   * Does the work on {@code connection}; must not commit, roll back or close it.
   *
   * @return the result stored by the barrier and replied (JSON by convention); null or empty for none
   */
  byte[] run(Connection connection, IncomingMessage command) throws Exception;
}
