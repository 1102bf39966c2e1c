package io.converge.ops.bench.outbox;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.db.FirstValue;
import io.converge.outbox.cdc.CdcRelay;
import io.converge.outbox.rocketmq.RocketMQSink;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * The {@code cdc-drain} scenario's relay: a {@link CdcRelay} into the embedded RocketMQ whose slot is
 * created first (so that rows filled afterwards are in its stream), stopped while the outbox is
 * filled, then started and timed from its first published row to its last (the engine's start is not
 * counted). Not thread-safe; used by {@link DrainScenario}.
 */
final class CdcDrain implements AutoCloseable {

  /** How long the drain waits without progress before it fails instead of hanging. */
  private static final Duration STALL = Duration.ofSeconds(60);

  private final CdcRelay cdc;
  private final DataSource pool;

  private CdcDrain(CdcRelay cdc, DataSource pool) {
    this.cdc = cdc;
    this.pool = pool;
  }

  /** A CDC relay on {@code pool}'s schema, its publication and slot created, stopped. */
  static CdcDrain prepare(BenchEnv env, DataSource pool) {
    String schema;
    try {
      schema = FirstValue.of(pool, "SELECT current_schema()", rs -> rs.getString(1));
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read the bench schema", e);
    }
    CdcRelay cdc = CdcRelay.builder().name("bench_" + Long.toHexString(System.nanoTime()))
        .jdbcUrl(env.platform().postgres().jdbcUrl(), env.platform().postgres().user(),
            env.platform().postgres().password())
        .schema(schema)
        .sink(RocketMQSink.nameServer(env.platform().rocketmq().nameServerAddress()).group("bench-cdc").build())
        .build();
    CdcDrain drain = new CdcDrain(cdc, pool);
    cdc.start(); // creates publication and slot: rows inserted from now on are in its stream
    drain.awaitSlot(cdc.slotName());
    cdc.close();
    return drain;
  }

  /** Waits until the engine has created its replication slot (closing it earlier fails its start). */
  private void awaitSlot(String slot) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT active FROM pg_replication_slots WHERE slot_name = ?")) {
      ps.setString(1, slot);
      while (System.nanoTime() < deadline) {
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && rs.getBoolean(1)) {
            return;
          }
        }
        Thread.sleep(50);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read replication slots", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
    throw new IllegalStateException("CDC relay did not open its slot " + slot + " within 60 s");
  }

  /** Starts the relay on {@code rows} filled rows and times it until none is unpublished; returns rows per second. */
  double drain(int rows) throws Exception {
    long started = System.nanoTime();
    cdc.start();
    try {
      long first;
      long before;
      long deadline = System.nanoTime() + STALL.toNanos();
      while ((before = rows - DrainScenario.unpublished(pool)) == 0) {
        stalled(deadline);
        Thread.sleep(5);
      }
      first = System.nanoTime();
      if (before == rows) { // all in the first batch: only the time since start is there to count
        return rows / ((first - started) / 1e9);
      }
      long left = rows - before;
      deadline = System.nanoTime() + STALL.toNanos();
      for (long now; (now = DrainScenario.unpublished(pool)) > 0;) {
        if (now < left) {
          left = now;
          deadline = System.nanoTime() + STALL.toNanos();
        }
        stalled(deadline);
        Thread.sleep(20);
      }
      return (rows - before) / ((System.nanoTime() - first) / 1e9);
    } finally {
      cdc.close();
    }
  }

  private void stalled(long deadline) throws Exception {
    if (System.nanoTime() > deadline) {
      throw new IllegalStateException(
          "cdc-drain: no row published for " + STALL.toSeconds() + " s, " + DrainScenario.unpublished(pool) + " left");
    }
  }

  /** Drops the relay's slot. */
  @Override
  public void close() {
    cdc.dropSlot();
  }
}
