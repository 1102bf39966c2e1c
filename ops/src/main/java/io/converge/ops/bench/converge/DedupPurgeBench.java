package io.converge.ops.bench.converge;

import io.converge.consumer.DedupPurger;
import io.converge.core.Migrations;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.CpuCost;
import io.converge.ops.bench.Memory;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import javax.sql.DataSource;

/**
 * {@code converge bench dedup-purge --prefill N}: the retention of one expired day of N dedup claims, measured twice
 * through {@link DedupPurger#purgeExpired}: with the rows in their day's partition (dropped whole) and with the same
 * rows in the catch-all (today's bounded-batch DELETE, batches of {@link DedupPurger#DEFAULT_BATCH_SIZE}). Reports the
 * wall time, the WAL written ({@code pg_current_wal_lsn()} before and after), the load average and the CPU of the bench
 * JVM and of PostgreSQL (in all and per 1,000 rows purged; not the fill) beside each, then the JVM's memory after
 * both. Not thread-safe (one run).
 */
public final class DedupPurgeBench {

  /** The name on the command line. */
  public static final String NAME = "dedup-purge";

  private static final String FILL = """
      INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, topic, processed_at, day)
      SELECT 'default', 'bench-purge', md5(g::text), 'PROCESSED', 'bench', ?, ?
        FROM generate_series(1, ?) g
      """;

  private final BenchEnv env;
  private final PrintStream out;

  public DedupPurgeBench(BenchEnv env, PrintStream out) {
    this.env = env;
    this.out = out;
  }

  /** Fills and purges {@code rows} claims once per way. */
  public void run(long rows) throws SQLException {
    if (rows < 1) {
      throw new IllegalArgumentException("dedup-purge needs --prefill N, N > 0, but was " + rows);
    }
    DataSource ds = env.newPool("bench_purge", 2);
    Migrations.apply(ds, "consumer");
    Instant now = Instant.now();
    Instant expired = now.minus(Duration.ofDays(8));
    LocalDate expiredDay = LocalDate.ofInstant(expired, ZoneOffset.UTC);
    DedupPurger purger = new DedupPurger(ds, DedupPurger.DEFAULT_RETENTION, DedupPurger.DEFAULT_BATCH_SIZE,
        Clock.systemUTC());
    purger.purgeExpired(1); // today's partitions: the measured runs only purge
    DedupPurger.partitions(ds).createAhead(expiredDay, 1);

    CpuCost.Meter meter = CpuCost.Meter.of(env.platform().postgres().dataSource());
    fill(ds, rows, expired, expiredDay);
    measure(ds, meter, "drop the day's partition", rows, () -> purger.purgeExpired(1));
    fill(ds, rows, expired, LocalDate.EPOCH); // the same rows in the catch-all
    measure(ds, meter, "batch DELETE (catch-all)", rows, () -> purger.purgeExpired(Integer.MAX_VALUE));
    out.println("memory after the purges: " + Memory.sample().describe());
  }

  private void fill(DataSource ds, long rows, Instant at, LocalDate day) throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(FILL)) {
      ps.setTimestamp(1, Timestamp.from(at));
      ps.setObject(2, day);
      ps.setLong(3, rows);
      ps.executeUpdate();
      c.createStatement().execute("CHECKPOINT"); // both ways start after a checkpoint: the same full-page writes
    }
  }

  private void measure(DataSource ds, CpuCost.Meter meter, String what, long rows, Runnable purge)
      throws SQLException {
    String before = lsn(ds);
    CpuCost.Reading cpuBefore = meter.now();
    long started = System.nanoTime();
    purge.run();
    double seconds = (System.nanoTime() - started) / 1e9;
    CpuCost.Reading cpuAfter = meter.now();
    long wal;
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ?::pg_lsn)::bigint")) {
      ps.setString(1, before);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        wal = rs.getLong(1);
      }
    }
    long left = count(ds);
    CpuCost cpu = CpuCost.NONE.plus(rows - left, cpuBefore, cpuAfter); // per row purged
    out.printf("%-26s %,12d rows: %8.3f s, WAL %,14d bytes (%.1f bytes/row), %d rows left, load average %.2f%n", what,
        rows, seconds, wal, (double) wal / rows, left,
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    out.printf("  CPU of %-24s  %s in all; %s%n", what, cpu.total(), cpu.perThousand("row"));
  }

  private static String lsn(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        ResultSet rs = c.createStatement().executeQuery(
            "SELECT pg_current_wal_lsn()::text")) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static long count(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        ResultSet rs = c.createStatement().executeQuery(
            "SELECT count(*) FROM converge_dedup WHERE consumer_group = 'bench-purge'")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
