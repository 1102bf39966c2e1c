package io.converge.saga;

import java.sql.Connection;

/**
 * The work of a local step, or of its compensation: it runs on the coordinator's own connection, inside the
 * transaction of the transition (so its writes commit with the saga's state, or not at all). Throw a
 * {@link io.converge.consumer.BusinessException} to refuse (the step's writes are rolled back to a savepoint and
 * the saga compensates); any other exception rolls the whole transition back and it is tried again.
 *
 * @param <D> the saga's data type
 */
@FunctionalInterface
public interface LocalAction<D> {

  /**
   * Does the work; must not commit, roll back or close {@code connection}.
   *
   * @return the saga's data after the step (return {@code data} when unchanged)
   */
  D run(Connection connection, D data) throws Exception;
}
