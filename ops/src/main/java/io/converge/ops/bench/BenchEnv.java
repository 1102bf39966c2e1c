package io.converge.ops.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The servers a benchmark runs against, started once for all scenarios of one {@code converge bench}
 * call: an embedded RocketMQ and PostgreSQL with fsync on (or an external PostgreSQL when
 * {@code converge.jdbc.url} is set), and Pulsar in its child JVM when a Pulsar scenario first asks for it.
 * Not thread-safe; used from the runner's thread.
 */
public final class BenchEnv implements AutoCloseable {

  private final EmbeddedRocketMQ rocketmq;
  private final ConvergePostgres postgres;
  private final List<HikariDataSource> pools = new ArrayList<>();
  private EmbeddedPulsar pulsar;

  private BenchEnv(EmbeddedRocketMQ rocketmq, ConvergePostgres postgres) {
    this.rocketmq = rocketmq;
    this.postgres = postgres;
  }

  /** Starts the servers. */
  public static BenchEnv start() {
    EmbeddedRocketMQ mq = EmbeddedRocketMQ.builder().fastTransactionChecks().build().start();
    try {
      return new BenchEnv(mq, ConvergePostgres.shared());
    } catch (RuntimeException e) {
      mq.stop();
      throw e;
    }
  }

  /** The RocketMQ server. */
  public EmbeddedRocketMQ rocketmq() {
    return rocketmq;
  }

  /** The PostgreSQL server. */
  public ConvergePostgres postgres() {
    return postgres;
  }

  /** The Pulsar server (a child JVM), started on the first call; stopped with this env. */
  public EmbeddedPulsar pulsar() {
    if (pulsar == null) {
      pulsar = EmbeddedPulsar.builder().build().start();
    }
    return pulsar;
  }

  /** A new Pulsar topic name (created on first use by the broker). */
  public String newPulsarTopic(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** A new topic with a unique name. */
  public String newTopic(String prefix) {
    String topic = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    rocketmq.createTopic(topic);
    return topic;
  }

  /** A pooled data source ({@code size} connections) on a new schema; closed with this env. */
  public DataSource newPool(String schemaPrefix, int size) {
    DataSource schema = postgres.newSchema(schemaPrefix);
    HikariConfig config = new HikariConfig();
    config.setDataSource(schema);
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
    if (pulsar != null) {
      pulsar.stop();
    }
    rocketmq.stop();
    postgres.close();
  }
}
