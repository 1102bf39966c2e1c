package io.converge.ops.db;

import picocli.CommandLine.Option;

/**
 * A {@link DbActionCommand} that closes a ticket in the name of a person: {@code --by NAME} (required, not blank)
 * and {@code --note TEXT}, recorded with the ticket.
 */
public abstract class DbResolveCommand extends DbActionCommand {

  /** Who resolved the ticket; never blank once {@link #problem()} passed. */
  @Option(names = "--by", required = true, description = "who resolved it")
  protected String by;

  /** What was done; null when not given. */
  @Option(names = "--note", description = "what was done (delivered or refunded by hand, discarded)")
  protected String note;

  @Override
  protected String problem() {
    if (by.isBlank()) {
      return "--by must name who resolved the ticket, but was blank";
    }
    return super.problem();
  }
}
