package io.converge.broker.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A second embedded PostgreSQL of the test's own, which the test freezes (SIGSTOP of the postmaster and
 * its backends: connections hang, new ones time out) and thaws again: a database outage without
 * losing the server's state. Its pools are HikariCP's (an optional dependency of this module: a test
 * that uses this class adds {@code com.zaxxer:HikariCP}). Thread-safe.
 */
public final class PausablePostgres implements AutoCloseable {

  private final Path dataDir;
  private final ConvergePostgres server;
  private final java.util.List<HikariDataSource> pools = new java.util.concurrent.CopyOnWriteArrayList<>();

  private PausablePostgres(Path dataDir, ConvergePostgres server) {
    this.dataDir = dataDir;
    this.server = server;
  }

  /** Starts a new server on a free port with a data directory of its own. */
  public static PausablePostgres start() throws IOException {
    Path dir = Files.createTempDirectory("converge-pg-outage-");
    return new PausablePostgres(dir, ConvergePostgres.embedded(ConvergePostgres.Durability.FAST, 0, dir));
  }

  /** A pool whose {@code getConnection} gives up after {@code connectionTimeoutMillis}. */
  public HikariDataSource pool(long connectionTimeoutMillis) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(server.jdbcUrl());
    config.setUsername(server.user());
    config.setPassword(server.password());
    config.setMaximumPoolSize(4);
    // no idle minimum: HikariCP refills to it after each eviction, asynchronously, so a connection opened
    // just before a freeze would be handed out unchecked (used < 500 ms ago) and hang until the thaw
    config.setMinimumIdle(0);
    config.setConnectionTimeout(connectionTimeoutMillis);
    // a new connection to the frozen server fails instead of hanging until the thaw (pgjdbc's default is none)
    config.addDataSourceProperty("loginTimeout", Long.toString(Math.max(1, (connectionTimeoutMillis + 999) / 1000)));
    config.setValidationTimeout(Math.max(250, connectionTimeoutMillis / 2));
    config.setPoolName("outage-" + server.jdbcUrl().hashCode());
    HikariDataSource pool = new HikariDataSource(config);
    pools.add(pool);
    return pool;
  }

  /**
   * Stops (SIGSTOP) the postmaster and all its backends ({@link ConvergePostgres#freeze()}). The pools' idle
   * connections are evicted first: a connection used in the last 500 ms is handed out unchecked by HikariCP and a
   * statement on it would hang until the thaw (the test wants each getConnection to meet the outage). The
   * pools keep no idle minimum, so nothing refills them before the freeze takes effect.
   */
  public void freeze() {
    pools.forEach(p -> p.getHikariPoolMXBean().softEvictConnections());
    server.freeze();
  }

  /** Continues (SIGCONT) what {@link #freeze()} stopped. Idempotent. */
  public void thaw() {
    server.thaw();
  }

  @Override
  public void close() throws IOException {
    server.close(); // thaws first
    try (Stream<Path> files = Files.walk(dataDir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
