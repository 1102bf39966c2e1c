package io.converge.ops.purge;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.CliRun;
import io.converge.ops.CliSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code converge purge} against the embedded PostgreSQL: it deletes only published rows older than the
 * retention, in batches with progress; it keeps unpublished (however old), parked and recently published
 * rows; a dry run deletes nothing; a bad option or an unreachable database is a clear error and a
 * non-zero exit.
 */
class PurgeCommandIT {

  private CliSchema db;

  @BeforeEach
  void outbox() throws Exception {
    db = CliSchema.create("purgecli", "outbox");
    // 120 published 2 days ago, 30 published 1 hour ago, 40 unpublished of 3 days, 10 parked of 3 days
    insert(120, "now() - interval '2 days'", null);
    insert(30, "now() - interval '1 hour'", null);
    insert(40, null, null);
    insert(10, null, "now() - interval '2 days'");
  }

  @Test
  void purgesOnlyOldPublishedRowsInBatchesWithProgress() throws Exception {
    CliRun r = run("--retention", "1d", "--batch-size", "50");

    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out()).contains("purged 50 rows", "purged 100 rows", "purged 120 rows", "done: purged 120 rows");
    assertThat(count("published_at IS NOT NULL")).isEqualTo(30);
    assertThat(count("published_at IS NULL AND parked_at IS NULL")).isEqualTo(40);
    assertThat(count("parked_at IS NOT NULL")).isEqualTo(10);

    CliRun shorter = run("--retention", "30m");
    assertThat(shorter.status()).isZero();
    assertThat(shorter.out()).contains("done: purged 30 rows");
    assertThat(count("true")).as("unpublished and parked rows are never purged").isEqualTo(50);
  }

  @Test
  void dryRunCountsAndDeletesNothing() throws Exception {
    CliRun r = run("--retention", "PT6H", "--dry-run");
    assertThat(r.status()).isZero();
    assertThat(r.out()).contains("dry run: 120 published rows older than PT6H would be purged");
    assertThat(count("true")).isEqualTo(200);
  }

  @Test
  void passwordFromOptionAndBadInputAreReported() throws Exception {
    run("--batch-size", "0").assertFails(2, "--batch-size must be between 1 and 100000, but was 0");

    run("--retention", "yesterday").assertFails(2,
        "retention must be like 1d, 12h, 30m, 90s or PT6H, but was 'yesterday'");

    db.runIn("no_such_schema", "purge").assertFails(1, "purge failed: Cannot purge the outbox after 0 rows");
    assertThat(count("true")).isEqualTo(200);
  }

  private CliRun run(String... options) {
    List<String> args = new ArrayList<>(List.of("purge"));
    args.addAll(List.of(options));
    return db.run(args.toArray(String[]::new));
  }

  private void insert(int rows, String publishedAt, String parkedAt) throws Exception {
    String sql = "INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, header_names, header_values,"
        + " payload, created_at, published_at, parked_at) SELECT gen_random_uuid()::text, 'g', 't', 'k-' || i, '{}', '{}',"
        + " '\\x00', now() - interval '3 days', " + publishedAt + ", " + parkedAt + " FROM generate_series(1, ?) i";
    try (Connection c = db.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, rows);
      ps.executeUpdate();
    }
  }

  private long count(String where) throws Exception {
    return db.count("SELECT count(*) FROM converge_outbox WHERE " + where);
  }
}
