package io.converge.saga.tcc.http;

import java.sql.Connection;

/**
 * A participant's business work for one operation of a branch reached over HTTP, run by {@link TccServlet} through
 * the barrier. Throw a {@link io.converge.consumer.BusinessException} from a Try to refuse it (answered 422, nothing
 * stored); any other exception is a technical failure (answered 5xx, nothing stored).
 */
@FunctionalInterface
public interface TccHttpWork {

  /**
   * Does the work on {@code connection}, inside the servlet's transaction; must not commit, roll back or close it.
   *
   * @return the result stored by the barrier and answered (JSON by convention); null or empty for none
   */
  byte[] run(Connection connection, TccHttpRequest request) throws Exception;
}
