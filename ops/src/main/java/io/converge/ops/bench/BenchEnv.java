package io.converge.ops.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.converge.broker.DevPlatform;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * What a benchmark scenario runs against: the servers of one {@link DevPlatform} (started once for all
 * scenarios of one {@code converge bench} call, RocketMQ with fast transaction checks, Pulsar in its
 * child JVM when a Pulsar scenario first asks for it), plus the connection pools the scenarios open.
 * Not thread-safe; used from the runner's thread.
 */
public final class BenchEnv implements AutoCloseable {

  private final DevPlatform platform;
  private final List<HikariDataSource> pools = new ArrayList<>();
  private final long prefill;

  private BenchEnv(DevPlatform platform, long prefill) {
    this.platform = platform;
    this.prefill = prefill;
  }

  /** Starts the servers. */
  public static BenchEnv start() {
    return start(0);
  }

  /** Starts the servers; {@code prefill} is {@code --prefill}: the rows the scenarios that say so insert first. */
  public static BenchEnv start(long prefill) {
    return new BenchEnv(DevPlatform.builder().fastTransactionChecks().start(), prefill);
  }

  /** The rows a scenario that reads it inserts before its runs ({@code --prefill}, 0 by default). */
  public long prefill() {
    return prefill;
  }

  /** The servers: RocketMQ, PostgreSQL, Pulsar (started on first use), and their new topic names. */
  public DevPlatform platform() {
    return platform;
  }

  /** A pooled data source ({@code size} connections) on a new schema; closed with this env. */
  public DataSource newPool(String schemaPrefix, int size) {
    HikariConfig config = new HikariConfig();
    config.setDataSource(platform.postgres().newSchema(schemaPrefix));
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(size);
    config.setPoolName("bench-" + schemaPrefix);
    HikariDataSource pool = new HikariDataSource(config);
    pools.add(pool);
    return pool;
  }

  @Override
  public void close() {
    pools.forEach(HikariDataSource::close);
    platform.close();
  }
}
