package io.converge.consumer;

import io.converge.core.ConvergeException;

/**
 * A {@link StateMachine} that records its history found no table {@value StateMachine#HISTORY_TABLE} on the
 * connection's search path: the {@code consumer} migration was not applied. Nothing was written; apply the
 * migration ({@code Migrations.apply(dataSource, "consumer")}) or build the machine with
 * {@link StateMachine.Builder#history(boolean) history(false)}.
 */
public class StateHistoryMissingException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final String machine;

  /** Machine {@code machine} (its entity type) found no history table. */
  public StateHistoryMissingException(String machine) {
    super(message(machine));
    this.machine = machine;
  }

  /** Machine {@code machine} (its entity type) found no history table: the database said so in {@code cause}. */
  public StateHistoryMissingException(String machine, Throwable cause) {
    super(message(machine), cause);
    this.machine = machine;
  }

  private static String message(String machine) {
    return "State machine '" + machine + "' records its history in table " + StateMachine.HISTORY_TABLE
        + ", which does not exist on this connection's search path: apply the consumer migration"
        + " (Migrations.apply(dataSource, \"consumer\")) or build the machine with history(false)";
  }

  /** The machine's entity type. */
  public String machine() {
    return machine;
  }
}
