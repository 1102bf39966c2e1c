package io.converge.ops.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.ops.CliRun;
import io.converge.producer.schema.Migrations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code converge pulsar parked|resume} against the embedded PostgreSQL: a Pulsar transaction recovery
 * parked is listed with group, message count, attempts, age and reason, and resumed; one that is not
 * parked exits 3, a malformed id 2.
 */
class PulsarParkedCommandIT {

  private final ConvergePostgres pg = ConvergePostgres.shared();
  private javax.sql.DataSource ds;
  private String schema;

  @BeforeEach
  void tables() throws Exception {
    ds = pg.newSchema("pulsarcli");
    Migrations.apply(ds, "pulsar");
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      ResultSet rs = s.executeQuery("SELECT current_schema()");
      rs.next();
      schema = rs.getString(1);
      s.execute("INSERT INTO converge_pulsar_txn (txn_most, txn_least, producer_group, deadline, created_at, attempts,"
          + " parked_at, reason) VALUES (0, 42, 'orders', now() - interval '3 hours', now() - interval '3 hours', 10,"
          + " now() - interval '2 hours 5 minutes', 'Pulsar refused message m-1 on gone: TopicTerminatedException'),"
          + " (0, 43, 'orders', now() + interval '1 minute', now(), 0, NULL, NULL)");
      s.execute("INSERT INTO converge_pulsar_txn_message (message_id, txn_most, txn_least, topic, properties, payload)"
          + " VALUES ('m-1', 0, 42, 'gone', '{}', '\\x00'), ('m-2', 0, 42, 'gone', '{}', '\\x00')");
    }
  }

  @Test
  void parkedTransactionsAreListedWithAgeAndReasonAndResumed() throws Exception {
    CliRun list = run("pulsar", "parked");
    assertThat(list.status).as(list.err).isZero();
    assertThat(list.out).contains("1 parked Pulsar transactions").contains("(0,42)").contains("orders").contains("2h 5m")
        .contains("Pulsar refused message m-1 on gone: TopicTerminatedException").doesNotContain("(0,43)");
    assertThat(list.out.lines().filter(l -> l.startsWith("(0,42)")).findFirst().orElseThrow()).matches("\\(0,42\\)\\s+orders\\s+2\\s+10\\s+.*");

    CliRun resume = run("pulsar", "resume", "(0,42)");
    assertThat(resume.status).as(resume.err).isZero();
    assertThat(count("SELECT count(*) FROM converge_pulsar_txn WHERE parked_at IS NULL AND attempts = 0 AND txn_least = 42")).isOne();
    assertThat(run("pulsar", "parked").out).contains("0 parked Pulsar transactions");

    CliRun again = run("pulsar", "resume", "0,42");
    assertThat(again.status).isEqualTo(3);
    assertThat(again.err).contains("transaction 0,42 is not parked");
    CliRun bad = run("pulsar", "resume", "42");
    assertThat(bad.status).isEqualTo(2);
    assertThat(bad.err).contains("ID must be (most,least), but was 42");
  }

  private CliRun run(String... command) {
    List<String> args = new ArrayList<>(List.of(command));
    args.addAll(List.of("--jdbc-url", pg.jdbcUrl(), "--user", pg.user(), "--password", pg.password(), "--schema", schema));
    return CliRun.of(args.toArray(String[]::new));
  }

  private long count(String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
