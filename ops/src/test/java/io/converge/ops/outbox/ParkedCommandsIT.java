package io.converge.ops.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.ops.CliRun;
import io.converge.producer.schema.Migrations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code converge outbox parked|resume} and {@code converge dlq list|discard|tickets|resolve} against
 * the embedded PostgreSQL, through the {@code converge} command line: parked rows and dead letters are
 * shown with age and reason, a key is resumed, a dead letter discarded, a ticket resolved; an id or key
 * that is not parked exits 3, bad options 2, a database that fails 1.
 */
class ParkedCommandsIT {

  private final ConvergePostgres pg = ConvergePostgres.shared();
  private DataSource ds;
  private String schema;

  @BeforeEach
  void tables() throws Exception {
    ds = pg.newSchema("parkedcli");
    Migrations.apply(ds, "outbox");
    Migrations.apply(ds, "consumer");
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      ResultSet rs = s.executeQuery("SELECT current_schema()");
      rs.next();
      schema = rs.getString(1);
      s.execute("INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, msg_key, header_names, header_values,"
          + " payload, created_at, attempts, last_error, parked_at) VALUES"
          + " ('m-poison', 'g', 'orders', 'poison', 'poison', '{}', '{}', '\\x00', now() - interval '3 hours', 5,"
          + "  'InvalidMessageException: 100 KiB over the 64 KiB limit', now() - interval '2 hours 5 minutes'),"
          + " ('m-healthy', 'g', 'orders', 'healthy', 'healthy', '{}', '{}', '\\x00', now(), 0, NULL, NULL)");
      s.execute("INSERT INTO converge_dlq (tenant, consumer_group, topic, message_id, reason_code, reason, attempts, headers,"
          + " payload, status, created_at) VALUES ('t1', 'billing', 'charges', 'm-dead', 'RETRIES_EXHAUSTED',"
          + " 'SQLException: deadlock detected', 8, '', '\\x00', 'PARKED', now() - interval '26 hours')");
      s.execute("INSERT INTO converge_ticket (tenant, consumer_group, topic, message_id, kind, reason, status, created_at)"
          + " VALUES ('t1', 'billing', 'charges', 'm-odd', 'MONEY_ANOMALY', 'debit exceeds the order total', 'OPEN',"
          + " now() - interval '10 minutes')");
    }
  }

  @Test
  void parkedOutboxKeysAreListedWithAgeAndReasonAndResumed() throws Exception {
    CliRun list = run("outbox", "parked");
    assertThat(list.status).as(list.err).isZero();
    assertThat(list.out).contains("1 parked rows").contains("poison").contains("m-poison").contains("2h 5m")
        .contains("InvalidMessageException: 100 KiB over the 64 KiB limit").doesNotContain("m-healthy");

    CliRun resume = run("outbox", "resume", "poison");
    assertThat(resume.status).as(resume.err).isZero();
    assertThat(resume.out).contains("resumed key 'poison': 1 row(s)");
    assertThat(count("SELECT count(*) FROM converge_outbox WHERE parked_at IS NULL AND attempts = 0 AND message_id = 'm-poison'"))
        .isOne();
    assertThat(run("outbox", "parked").out).contains("0 parked rows");

    CliRun again = run("outbox", "resume", "poison");
    assertThat(again.status).isEqualTo(3);
    assertThat(again.err).contains("key 'poison' has no parked row");
  }

  @Test
  void deadLettersAndTicketsAreListedDiscardedAndResolved() throws Exception {
    CliRun list = run("dlq", "list");
    assertThat(list.status).as(list.err).isZero();
    assertThat(list.out).contains("1 dead letters").contains("billing").contains("m-dead").contains("1d 2h")
        .contains("RETRIES_EXHAUSTED: SQLException: deadlock detected");
    long dlqId = count("SELECT id FROM converge_dlq WHERE message_id = 'm-dead'");
    CliRun discard = run("dlq", "discard", Long.toString(dlqId));
    assertThat(discard.status).as(discard.err).isZero();
    assertThat(count("SELECT count(*) FROM converge_dlq WHERE status = 'DISCARDED'")).isOne();
    assertThat(run("dlq", "discard", Long.toString(dlqId)).status).as("no longer parked").isEqualTo(3);

    CliRun tickets = run("dlq", "tickets");
    assertThat(tickets.out).contains("MONEY_ANOMALY").contains("m-odd").contains("10m").contains("debit exceeds the order total");
    long ticketId = count("SELECT id FROM converge_ticket WHERE message_id = 'm-odd'");
    CliRun resolve = run("dlq", "resolve", Long.toString(ticketId), "--by", "alice", "--note", "refunded by hand");
    assertThat(resolve.status).as(resolve.err).isZero();
    assertThat(count("SELECT count(*) FROM converge_ticket WHERE status = 'RESOLVED' AND resolved_by = 'alice'")).isOne();
    assertThat(run("dlq", "resolve", Long.toString(ticketId), "--by", "bob").status).isEqualTo(3);
  }

  @Test
  void badOptionsAndAFailingDatabaseAreReported() {
    CliRun badLimit = run("outbox", "parked", "--limit", "0");
    assertThat(badLimit.status).isEqualTo(2);
    assertThat(badLimit.err).contains("--limit must be between 1 and 10000, but was 0");
    assertThat(run("dlq", "resolve", "1").status).as("--by is required").isEqualTo(2);
    CliRun noTable = CliRun.of(new String[] {"dlq", "list", "--jdbc-url", pg.jdbcUrl(), "--user", pg.user(), "--password",
        pg.password(), "--schema", "no_such_schema"});
    assertThat(noTable.status).isEqualTo(1);
    assertThat(noTable.err).contains("dlq list failed:");
    CliRun noOutbox = CliRun.of(new String[] {"outbox", "parked", "--jdbc-url", pg.jdbcUrl(), "--user", pg.user(), "--password",
        pg.password(), "--schema", "no_such_schema"});
    assertThat(noOutbox.status).isEqualTo(1);
    assertThat(noOutbox.err).contains("outbox parked failed:");
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
