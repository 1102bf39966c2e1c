package io.converge.ops.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.converge.broker.DevPlatform;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
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

  private BenchEnv(DevPlatform platform) {
    this.platform = platform;
  }

  /** Starts the servers. */
  public static BenchEnv start() {
    return new BenchEnv(DevPlatform.builder().fastTransactionChecks().start());
  }

  /** The servers, for scenarios that start applications on them. */
  public DevPlatform platform() {
    return platform;
  }

  /** The RocketMQ server. */
  public EmbeddedRocketMQ rocketmq() {
    return platform.rocketmq();
  }

  /** The PostgreSQL server. */
  public ConvergePostgres postgres() {
    return platform.postgres();
  }

  /** The Pulsar server (a child JVM), started on the first call; stopped with this env. */
  public EmbeddedPulsar pulsar() {
    return platform.pulsar();
  }

  /** A new Pulsar topic name (created on first use by the broker). */
  public String newPulsarTopic(String prefix) {
    return platform.newPulsarTopic(prefix);
  }

  /** A new RocketMQ topic with a unique name. */
  public String newTopic(String prefix) {
    return platform.newTopic(prefix);
  }

  /** A pooled data source ({@code size} connections) on a new schema; closed with this env. */
  public DataSource newPool(String schemaPrefix, int size) {
    HikariConfig config = new HikariConfig();
    config.setDataSource(postgres().newSchema(schemaPrefix));
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
