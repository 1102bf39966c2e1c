package io.converge.console.action;

import io.converge.core.DatabaseUnavailableException;
import io.converge.core.internal.OpsRows;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Performs the console's actions and keeps their audit ({@code converge_console_audit}, migration
 * {@code console}): each decision runs the store operation of the command line, then is recorded with who,
 * when, the note and whether it applied. The store operation and the audit row are two short transactions:
 * a database failing between them leaves a decision carried out but not audited, and the error is shown.
 * Thread-safe.
 */
public final class ConsoleActions {

  /**
   * One audited decision.
   *
   * @param id its number
   * @param at when
   * @param operator who
   * @param action what
   * @param target on which item (key or id)
   * @param note the person's note, or null
   * @param done whether the item was in the state the action needs (false: nothing changed)
   */
  public record AuditRecord(long id, Instant at, String operator, Action action, String target, String note,
      boolean done) {
  }

  private static final Logger LOG = LoggerFactory.getLogger(ConsoleActions.class);

  private static final String AUDIT = """
      INSERT INTO converge_console_audit (operator, action, kind, target, note, outcome) VALUES (?, ?, ?, ?, ?, ?)
      """;
  private static final String RECENT = """
      SELECT id, at, operator, action, target, note, outcome FROM converge_console_audit ORDER BY id DESC LIMIT ?
      """;

  private final DataSource dataSource;
  private final OpsRows rows;

  private ConsoleActions(DataSource dataSource) {
    this.dataSource = dataSource;
    this.rows = OpsRows.on(dataSource);
  }

  /** The actions on {@code dataSource}, whose schema has the {@code console} migration applied. */
  public static ConsoleActions on(DataSource dataSource) {
    return new ConsoleActions(Objects.requireNonNull(dataSource, "dataSource"));
  }

  /**
   * Performs {@code action} on {@code target} as {@code operator} and audits it.
   *
   * @param note the operator's note; nullable unless {@link Action#needsNote()}
   * @return whether it applied (false: the item was no longer in the state the action needs; audited too)
   * @throws IllegalArgumentException when the operator is blank, a note is missing or the target is invalid
   * @throws DatabaseUnavailableException when the database is unreachable
   *     ({@code io.converge.core.DatabaseRefusedException} when it refuses a statement)
   */
  public boolean perform(Action action, String target, String operator, String note) {
    if (operator == null || operator.isBlank()) {
      throw new IllegalArgumentException("an action needs the operator who takes it, but none was given");
    }
    if (target == null || target.isBlank()) {
      throw new IllegalArgumentException("an action needs a target, but none was given");
    }
    String cleanNote = note == null || note.isBlank() ? null : note.strip();
    if (action.needsNote() && cleanNote == null) {
      throw new IllegalArgumentException(action.title() + " needs a note saying what was done");
    }
    boolean done = action.perform(dataSource, target, operator, cleanNote);
    rows.updateOne("Could not audit " + action + " of " + target + " by " + operator, null, AUDIT, ps -> {
      ps.setString(1, operator);
      ps.setString(2, action.name());
      ps.setString(3, action.kind().name());
      ps.setString(4, target);
      ps.setString(5, cleanNote);
      ps.setString(6, done ? "DONE" : "NOT_APPLICABLE");
    });
    LOG.warn("Console: {} {} {} ({}){}", operator, action, target, done ? "done" : "not applicable",
        cleanNote == null ? "" : ": " + cleanNote);
    return done;
  }

  /** The latest audit records, newest first, at most {@code limit} (1 to 10000). */
  public List<AuditRecord> recent(int limit) {
    return rows.list("the console's audit", RECENT, limit, 10_000, rs -> {
      Timestamp at = rs.getTimestamp("at");
      return new AuditRecord(rs.getLong("id"), at.toInstant(), rs.getString("operator"),
          Action.valueOf(rs.getString("action")), rs.getString("target"), rs.getString("note"),
          "DONE".equals(rs.getString("outcome")));
    });
  }
}
