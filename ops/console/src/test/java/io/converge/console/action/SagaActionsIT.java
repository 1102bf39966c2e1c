package io.converge.console.action;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.console.inspect.Inspector;
import io.converge.console.inspect.StuckItem;
import io.converge.console.inspect.StuckKind;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The console's saga actions on the embedded PostgreSQL, on rows as the coordinator writes them (its own tests
 * prove it does): each listed saga offers only the actions its state allows, an action goes through
 * {@code SagaOps} (the saga's row, its event and tickets change as {@code converge saga} changes them) and is
 * audited, and an action on a saga no longer in the state it needs changes nothing and is audited as not applicable.
 */
class SagaActionsIT {

  private static DataSource ds;

  @BeforeAll
  static void schema() throws Exception {
    ds = ConvergePostgres.shared().newSchema("sagaactions");
    for (String module : List.of("console", "saga")) {
      Migrations.apply(ds, module);
    }
    execute("INSERT INTO converge_saga (id, tenant, definition, state, step, step_name, attempt, awaiting, data,"
        + " next_attempt_at, deadline, created_at, updated_at) VALUES"
        + " ('s-running', 't1', 'order', 'RUNNING', 1, 'debit', 2, true, '{}', now() - interval '20 minutes',"
        + "  now() + interval '1 hour', now() - interval '30 minutes', now()),"
        + " ('s-failed', 't2', 'order', 'COMPENSATION_FAILED', 0, 'reserve', 3, false, '{}', NULL, now(),"
        + "  now() - interval '3 hours', now()),"
        + " ('s-stopped', 't2', 'order', 'STOPPED', 1, 'debit', 1, false, '{}', NULL, now(),"
        + "  now() - interval '3 hours', now())",
        "INSERT INTO converge_saga_ticket (saga_id, tenant, step, kind, reason, status, created_at) VALUES"
            + " ('s-failed', 't2', 'reserve', 'COMPENSATION_FAILED', 'inventory refused 3 times', 'OPEN',"
            + "  now() - interval '2 hours'),"
            + " ('s-stopped', 't2', 'debit', 'ANOMALY', 'debit exceeds the total', 'OPEN', now() - interval '1 hour'),"
            // a compensation's SUCCESS recorded after its saga's purge (SagaPurgerIT): a ticket with no saga row
            + " ('s-purged', 't1', 'reserve', 'ANOMALY', 'compensation succeeded after its saga was purged', 'OPEN',"
            + "  now() - interval '40 minutes')");
  }

  @Test
  void eachSagaOffersTheActionsItsStateAllowsAndEachIsCarriedOutThroughSagaOpsAndAudited() throws Exception {
    Map<String, StuckItem> listed = Inspector.of(ds).list(StuckKind.SAGA, Inspector.Filter.all()).stream()
        .collect(Collectors.toMap(StuckItem::id, Function.identity()));
    assertThat(listed).containsOnlyKeys("s-running", "s-failed", "s-stopped", "s-purged");
    assertThat(offered(listed.get("s-running"))).containsExactly(Action.RETRY_SAGA, Action.COMPENSATE_SAGA);
    assertThat(offered(listed.get("s-failed"))).containsExactly(Action.RETRY_SAGA, Action.RESOLVE_SAGA_TICKETS);
    assertThat(offered(listed.get("s-stopped"))).containsExactly(Action.RESOLVE_SAGA_TICKETS);
    assertThat(offered(listed.get("s-purged"))).as("a purged saga can only have its ticket resolved")
        .containsExactly(Action.RESOLVE_SAGA_TICKETS);
    assertThat(listed.get("s-purged").reason()).isEqualTo(
        "purged, open ticket: ANOMALY compensation succeeded after its saga was purged");

    ConsoleActions actions = ConsoleActions.on(ds);
    assertThat(actions.perform(Action.COMPENSATE_SAGA, "s-running", "alice", "customer cancelled")).isTrue();
    assertThat(text("SELECT deadline <= now() AND next_attempt_at <= now() FROM converge_saga WHERE id = 's-running'"))
        .as("due now through its deadline path").isEqualTo("t");
    assertThat(actions.perform(Action.RETRY_SAGA, "s-failed", "bob", null)).isTrue();
    assertThat(text("SELECT state || ' ' || failures FROM converge_saga WHERE id = 's-failed'"))
        .isEqualTo("COMPENSATING 0");
    assertThat(actions.perform(Action.RESOLVE_SAGA_TICKETS, "s-stopped", "carol", "refunded by hand")).isTrue();
    assertThat(text("SELECT status || ' ' || resolved_by || ' ' || resolution FROM converge_saga_ticket"
        + " WHERE saga_id = 's-stopped'")).isEqualTo("RESOLVED carol refunded by hand");
    assertThat(actions.perform(Action.RESOLVE_SAGA_TICKETS, "s-purged", "erin", "stock re-counted")).isTrue();
    assertThat(text("SELECT status || ' ' || resolved_by FROM converge_saga_ticket WHERE saga_id = 's-purged'"))
        .isEqualTo("RESOLVED erin");
    assertThat(Inspector.of(ds).list(StuckKind.SAGA, Inspector.Filter.all())).extracting(StuckItem::id)
        .as("resolved, its ticket is no longer listed").doesNotContain("s-purged");
    assertThat(text("SELECT string_agg(kind, ',' ORDER BY seq) FROM converge_saga_event WHERE saga_id IN"
        + " ('s-running', 's-failed', 's-stopped')")).isEqualTo("OPERATOR_COMPENSATE,OPERATOR_RETRY,OPERATOR_RESOLVED");

    // a stopped saga is retried by nobody; its tickets are closed already: nothing changes, both audited
    assertThat(actions.perform(Action.RETRY_SAGA, "s-stopped", "dave", null)).isFalse();
    assertThat(actions.perform(Action.RESOLVE_SAGA_TICKETS, "s-stopped", "dave", "again")).isFalse();
    assertThat(actions.perform(Action.COMPENSATE_SAGA, "no-such-saga", "dave", null)).isFalse();
    assertThat(text("SELECT state FROM converge_saga WHERE id = 's-stopped'")).isEqualTo("STOPPED");
    assertThat(actions.recent(10)).extracting(r -> r.action() + " " + r.target() + " " + r.operator() + " " + r.done())
        .containsExactly("COMPENSATE_SAGA no-such-saga dave false", "RESOLVE_SAGA_TICKETS s-stopped dave false",
            "RETRY_SAGA s-stopped dave false", "RESOLVE_SAGA_TICKETS s-purged erin true",
            "RESOLVE_SAGA_TICKETS s-stopped carol true",
            "RETRY_SAGA s-failed bob true", "COMPENSATE_SAGA s-running alice true");
  }

  private static List<Action> offered(StuckItem item) {
    return java.util.Arrays.stream(Action.values())
        .filter(a -> a.kind() == StuckKind.SAGA && a.target(item) != null).toList();
  }

  private static String text(String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      assertThat(rs.next()).isTrue();
      return rs.getString(1);
    }
  }

  private static void execute(String... sqls) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      for (String sql : sqls) {
        s.execute(sql);
      }
    }
  }
}
