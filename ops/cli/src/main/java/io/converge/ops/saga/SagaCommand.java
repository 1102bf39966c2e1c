package io.converge.ops.saga;

import io.converge.ops.db.CommandGroup;
import io.converge.ops.db.DbCommand;
import io.converge.ops.db.DbListCommand;
import io.converge.ops.db.DurationConverter;
import io.converge.saga.SagaOps;
import io.converge.saga.SagaState;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code converge saga}: the sagas of the saga coordinator ({@code converge_saga}, its events and tickets;
 * {@link SagaOps}). {@code list} shows the sagas in an intermediate state and those stopped with an open ticket,
 * oldest first, with definition, state, step, attempt, age, next attempt and last error; {@code show ID} one saga
 * with its timeline and tickets; {@code retry}, {@code compensate} and {@code resolve} are the audited actions
 * ({@link SagaActions}). Exit 0 on success, 1 when the database fails, 2 on bad options, 3 when there is no such
 * saga, the action does not apply to its state, or a coordinator changed it meanwhile (nothing changed).
 */
@Command(name = "saga", description = "Sagas of the saga coordinator: list the running, compensating and ticketed ones, show one's"
    + " timeline, retry, compensate, resolve (audited).", subcommands = {
        SagaCommand.ListSagas.class, SagaCommand.Show.class, SagaActions.Retry.class, SagaActions.Compensate.class,
        SagaActions.Resolve.class, HelpCommand.class})
public final class SagaCommand extends CommandGroup {

  /** The filter options of {@code saga list}. */
  static final class FilterOptions {

    @Option(names = "--state", paramLabel = "STATE", description = "only sagas in this state (repeatable): RUNNING, COMPENSATING,"
        + " COMPENSATION_FAILED, STOPPED (default: all four; the last two only with an open ticket)")
    List<SagaState> states;

    @Option(names = "--definition", paramLabel = "NAME", description = "only sagas of this definition")
    String definition;

    @Option(names = "--older-than", paramLabel = "AGE", converter = DurationConverter.class, description = "only sagas started at"
        + " least this long ago, e.g. 5m, 2h, 1d")
    Duration olderThan;

    SagaOps.Filter filter(int limit) {
      SagaOps.Filter f = SagaOps.Filter.all().withLimit(limit).withDefinition(definition);
      if (states != null && !states.isEmpty()) {
        f = f.withStates(EnumSet.copyOf(states));
      }
      return olderThan == null ? f : f.withOlderThan(olderThan);
    }
  }

  /** {@code converge saga list [--state S]... [--definition NAME] [--older-than AGE] [--limit N]}. */
  @Command(name = "list", description = "Lists the sagas in an intermediate state (RUNNING, COMPENSATING) and those stopped with an"
      + " open ticket (COMPENSATION_FAILED, STOPPED), oldest first.")
  static final class ListSagas extends DbListCommand<SagaOps.Saga> {

    @Mixin
    FilterOptions options;

    ListSagas() {
      this(new FilterOptions());
    }

    // the rows are read with the options picocli sets on this mixin instance
    private ListSagas(FilterOptions options) {
      super("sagas", (dataSource, limit) -> {
        SagaOps ops = SagaOps.of(dataSource);
        SagaOps.Filter filter = options.filter(limit);
        return new Page<>(ops.count(filter), ops.list(filter));
      }, "%-24s id|%-12s definition|%-19s state|%-12s step|%7s attempt|%9s age|%-9s next|%7s tickets|%s last error",
          (s, now) -> new Object[]{s.id(), s.definition(), s.state(), dash(s.stepName()), s.attempt(), age(s.age()),
              next(s.nextAttemptAt(), now), s.openTickets(), orEmpty(s.lastError())});
      this.options = options;
    }

    /**
     * The open tickets of purged sagas (a compensation's SUCCESS after its saga's purge), which no saga row lists;
     * {@code converge saga resolve ID} closes them.
     */
    @Override
    protected void after(DataSource dataSource, PrintWriter out, Instant now) {
      List<SagaOps.Ticket> orphans = SagaOps.of(dataSource).orphanTickets(limit);
      if (orphans.isEmpty()) {
        return;
      }
      out.printf("%n%d open tickets of purged sagas (close with: converge saga resolve ID)%n", orphans.size());
      String line = "%-8s %-24s %-12s %-19s %9s  %s%n";
      out.printf(line, "ticket", "saga id", "step", "kind", "age", "reason");
      for (SagaOps.Ticket t : orphans) {
        out.printf(line, t.id(), t.sagaId(), dash(t.step()), t.kind(), age(t.createdAt(), now), orEmpty(t.reason()));
      }
    }

    @Override
    protected String problem() {
      if (options.states != null && !SagaOps.LISTED.containsAll(options.states)) {
        return "--state must be one of " + SagaOps.LISTED + ", but was " + options.states;
      }
      return super.problem();
    }
  }

  /** {@code converge saga show ID}. */
  @Command(name = "show", description = "Shows a saga: its row, its timeline (every event, in order) and its tickets.")
  static final class Show extends DbCommand {

    @Parameters(index = "0", paramLabel = "ID", description = "the saga's id (from saga list)")
    String id;

    @Override
    protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
      Optional<SagaOps.Detail> found = SagaOps.of(dataSource).show(id);
      if (found.isEmpty()) {
        err.println(name() + ": no saga " + id);
        return 3;
      }
      SagaOps.Detail d = found.get();
      SagaOps.Saga s = d.saga();
      Instant now = Instant.now();
      out.printf("saga %s (definition %s, tenant '%s'): %s at step %s (index %d), attempt %d, %d sends, %d failures,"
          + " %s%n", s.id(), s.definition(), d.tenant(), s.state(), dash(s.stepName()), d.step(), s.attempt(),
          d.sends(), d.failures(), d.awaiting() ? "a reply awaited" : "no command out");
      out.printf("version %d, started %s (%s ago), updated %s, next attempt %s, deadline %s%n", s.version(),
          s.createdAt(), DbListCommand.age(s.age()), d.updatedAt(), s.nextAttemptAt() == null ? "-"
              : s.nextAttemptAt() + " (" + next(s.nextAttemptAt(), now) + ")",
          d.deadline());
      if (s.lastError() != null) {
        out.println("last error: " + s.lastError());
      }
      out.println("data: " + d.data());
      out.println(d.events().size() + " events");
      String line = "%6s  %-27s %-20s %-12s %7s  %-36s  %s%n";
      out.printf(line, "seq", "at", "kind", "step", "attempt", "message id", "payload");
      for (SagaOps.Event e : d.events()) {
        out.printf(line, e.seq(), e.at(), e.kind(), dash(e.step()), e.attempt() == null ? "-" : e.attempt(),
            dash(e.messageId()), e.payload() == null ? "" : e.payload());
      }
      out.println(d.tickets().size() + " tickets");
      for (SagaOps.Ticket t : d.tickets()) {
        out.printf("ticket %d %s %s at step %s, opened %s: %s%s%n", t.id(), t.status(), t.kind(), dash(t.step()),
            t.createdAt(), t.reason(), t.resolvedAt() == null ? ""
                : "; resolved by " + t.resolvedBy() + " at "
                    + t.resolvedAt() + (t.resolution() == null ? "" : ": " + t.resolution()));
      }
      return 0;
    }
  }

  /** {@code text}, or {@code -} when null. */
  static String dash(String text) {
    return text == null ? "-" : text;
  }

  /** When a saga is next looked at: {@code -} (never: final), {@code due}, or {@code in 12s}. */
  static String next(Instant at, Instant now) {
    if (at == null) {
      return "-";
    }
    return at.isAfter(now) ? "in " + DbListCommand.age(Duration.between(now, at)) : "due";
  }
}
