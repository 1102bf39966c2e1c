package io.converge.saga.tcc;

import java.sql.Connection;

/**
 * A participant's business work for one operation of a TCC branch (freeze, debit the frozen amount, unfreeze), run by
 * {@link TccBarrier#run} on the caller's connection inside the caller's transaction.
 */
@FunctionalInterface
public interface TccBody {

  /**
   * Does the work; must not commit, roll back or close {@code connection}. An exception propagates out of
   * {@link TccBarrier#run} unchanged: the caller rolls its transaction back, and the barrier row with it.
   *
   * @return the result stored with the barrier row and returned to a duplicate (JSON by convention); null or empty
   *     for none
   */
  byte[] run(Connection connection) throws Exception;
}
