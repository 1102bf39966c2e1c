package io.converge.consumer.outage;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.converge.broker.postgres.ConvergePostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A second embedded PostgreSQL of the test's own, which the test freezes (SIGSTOP of the postmaster and
 * its backends: connections hang, new ones time out) and thaws again: a database outage without
 * losing the server's state.
 */
public final class PausablePostgres implements AutoCloseable {


  private final Path dataDir;
  private final ConvergePostgres server;

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
    config.setConnectionTimeout(connectionTimeoutMillis);
    // a statement on a pooled connection of a frozen server fails (SQLState 08) instead of hanging until the thaw,
    // as a production pool should be set up (pgjdbc's default socket and login timeouts are none)
    String seconds = Long.toString(Math.max(1, (connectionTimeoutMillis + 999) / 1000));
    config.addDataSourceProperty("socketTimeout", seconds);
    config.addDataSourceProperty("loginTimeout", seconds);
    config.setValidationTimeout(Math.max(250, connectionTimeoutMillis / 2));
    config.setPoolName("outage-" + server.jdbcUrl().hashCode());
    return new HikariDataSource(config);
  }

  /** Stops (SIGSTOP) the postmaster and all its backends ({@link ConvergePostgres#freeze()}). */
  public void freeze() {
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
