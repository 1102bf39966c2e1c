package io.converge.ops.saga;

import io.converge.ops.db.DbCommand;
import io.converge.saga.SagaOperationRefusedException;
import io.converge.saga.SagaOps;
import io.converge.saga.SagaState;
import io.converge.saga.StaleSagaException;
import java.io.PrintWriter;
import java.util.List;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The audited actions of {@code converge saga} ({@link SagaOps}): each names the operator ({@code --operator},
 * required, not blank) and records an event with it and the note. Exit 0 with what was done on stdout; 3 with
 * {@code saga <action>: <why>} on stderr when the action was refused or a coordinator changed the saga meanwhile
 * (nothing changed either way).
 */
final class SagaActions {

  private SagaActions() {
  }

  /** An action in the name of an operator. */
  abstract static class Action extends DbCommand {

    @Option(names = "--operator", required = true, paramLabel = "NAME", description = "who acts (recorded in the saga's events)")
    String operator;

    /** Acts on {@code ops}; returns what was done, for stdout. */
    abstract String act(SagaOps ops);

    @Override
    protected String problem() {
      if (operator.isBlank()) {
        return "--operator must name who acts, but was blank";
      }
      return super.problem();
    }

    @Override
    protected final int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      try {
        out.println(act(SagaOps.of(dataSource)));
        return 0;
      } catch (SagaOperationRefusedException e) {
        err.println(name() + ": " + e.getMessage() + "; nothing changed");
        return 3;
      } catch (StaleSagaException e) {
        err.println(name() + ": saga " + e.sagaId() + " changed while the command ran (a coordinator's transition"
            + " came first); nothing changed: look at it again (converge saga show " + e.sagaId() + ")");
        return 3;
      }
    }
  }

  /** {@code converge saga retry ID --operator NAME [--note TEXT]}. */
  @Command(name = "retry", description = "Makes a coordinator drive a saga again now: a RUNNING or COMPENSATING saga's current command"
      + " is sent again (same command id); a COMPENSATION_FAILED saga compensates again (failures reset, a new attempt;"
      + " its ticket stays open until resolve).")
  static final class Retry extends Action {

    @Parameters(index = "0", paramLabel = "ID", description = "the saga's id (from saga list)")
    String id;

    @Option(names = "--note", paramLabel = "TEXT", description = "why (recorded with the operator)")
    String note;

    @Override
    String act(SagaOps ops) {
      SagaOps.Saga s = ops.retry(id, operator, note);
      return "retried saga " + id + ": " + s.state() + " at step " + SagaCommand.dash(s.stepName()) + ", attempt "
          + s.attempt() + ", due now; a coordinator's next poll sends its "
          + (s.state() == SagaState.RUNNING ? "command" : "compensation") + " again"
          + (s.openTickets() > 0 ? " (its ticket stays open: converge saga resolve " + id + ")" : "");
    }
  }

  /** {@code converge saga compensate ID --operator NAME [--note TEXT]}. */
  @Command(name = "compensate", description = "Makes a coordinator compensate a RUNNING saga through its deadline path: its deadline is"
      + " set to now; the next poll compensates the steps that were sent, last first.")
  static final class Compensate extends Action {

    @Parameters(index = "0", paramLabel = "ID", description = "the saga's id (from saga list)")
    String id;

    @Option(names = "--note", paramLabel = "TEXT", description = "why (recorded with the operator)")
    String note;

    @Override
    String act(SagaOps ops) {
      SagaOps.Saga s = ops.compensate(id, operator, note);
      return "saga " + id + " goes to compensation (it was at step " + SagaCommand.dash(s.stepName())
          + "): its deadline is now; a coordinator's next poll compensates the steps that were sent, last first";
    }
  }

  /** {@code converge saga resolve ID --operator NAME [--resolution TEXT]} or {@code resolve --ticket N …}. */
  @Command(name = "resolve", description = "Closes the open tickets of a saga (or, with --ticket, one ticket) after a person dealt with"
      + " it; the saga's state does not change.")
  static final class Resolve extends Action {

    @Parameters(index = "0", arity = "0..1", paramLabel = "ID", description = "the saga's id: all its open tickets")
    String id;

    @Option(names = "--ticket", paramLabel = "N", description = "only this ticket (from saga show), instead of a saga's id")
    Long ticket;

    @Option(names = "--resolution", paramLabel = "TEXT", description = "what was done (refunded by hand, checked)")
    String resolution;

    @Override
    protected String problem() {
      if ((id == null) == (ticket == null)) {
        return "give either a saga's ID or --ticket N";
      }
      return super.problem();
    }

    @Override
    String act(SagaOps ops) {
      List<SagaOps.Ticket> closed = ticket != null ? List.of(ops.resolveTicket(ticket, operator, resolution))
          : ops.resolve(id, operator, resolution);
      StringBuilder done = new StringBuilder();
      for (SagaOps.Ticket t : closed) {
        done.append(done.length() == 0 ? "" : System.lineSeparator()).append("resolved ticket ").append(t.id())
            .append(" of saga ").append(t.sagaId()).append(" (").append(t.kind()).append(" at step ")
            .append(SagaCommand.dash(t.step())).append(')');
      }
      return done.toString();
    }
  }
}
