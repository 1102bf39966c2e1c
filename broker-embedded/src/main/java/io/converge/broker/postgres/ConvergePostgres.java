package io.converge.broker.postgres;

import io.converge.broker.Dirs;
import io.converge.broker.EmbeddedServerException;
import io.converge.broker.Freezer;
import io.converge.broker.Ports;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PostgreSQL that Converge's tests, demo and benchmarks use: a real PostgreSQL 17 server started
 * from a Maven artifact (one per JVM, see {@link #shared()}), or an external one when a JDBC URL is
 * configured, with no code change:
 *
 * <table>
 *   <caption>configuration (system property, else environment variable)</caption>
 *   <tr><th>property</th><th>environment</th><th>meaning</th></tr>
 *   <tr><td>{@code converge.jdbc.url}</td><td>{@code CONVERGE_JDBC_URL}</td><td>use this external server</td></tr>
 *   <tr><td>{@code converge.jdbc.user}</td><td>{@code CONVERGE_JDBC_USER}</td><td>its user (default postgres)</td></tr>
 *   <tr><td>{@code converge.jdbc.password}</td><td>{@code CONVERGE_JDBC_PASSWORD}</td><td>its password</td></tr>
 *   <tr><td>{@code converge.postgres.durability}</td><td>{@code CONVERGE_POSTGRES_DURABILITY}</td>
 *       <td>embedded only: {@code durable} (default: fsync and synchronous_commit on) or {@code fast}</td></tr>
 * </table>
 *
 * <p>The embedded server runs with {@code wal_level=logical} (for CDC) and durability made explicit:
 * the library it comes from starts with fsync off, which hides the real cost of a commit.
 *
 * <p>Tests isolate themselves with {@link #newSchema(String)}, not by restarting the server.
 * Thread-safe.
 */
public final class ConvergePostgres implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ConvergePostgres.class);
  private static final Pattern SCHEMA_PREFIX = Pattern.compile("[a-z][a-z0-9_]{0,40}");
  private static ConvergePostgres shared;

  private final String jdbcUrl;
  private final String user;
  private final String password;
  private final EmbeddedPostgres embedded;
  private final Path dataDir;
  private final Path serverDir;
  private final Freezer freezer = new Freezer("Embedded PostgreSQL");
  private boolean closed;

  private ConvergePostgres(String jdbcUrl, String user, String password, EmbeddedPostgres embedded, Path dataDir,
      Path serverDir) {
    this.jdbcUrl = jdbcUrl;
    this.user = user;
    this.password = password;
    this.embedded = embedded;
    this.dataDir = dataDir;
    this.serverDir = serverDir;
  }

  /**
   * The instance of this JVM: external when {@code converge.jdbc.url} / {@code CONVERGE_JDBC_URL} is
   * set, else an embedded server started on first call and stopped when the JVM exits.
   */
  public static synchronized ConvergePostgres shared() {
    if (shared == null) {
      String url = setting("converge.jdbc.url", "CONVERGE_JDBC_URL", null);
      shared = url != null
          ? external(url, setting("converge.jdbc.user", "CONVERGE_JDBC_USER", "postgres"),
              setting("converge.jdbc.password", "CONVERGE_JDBC_PASSWORD", ""))
          : embedded(
              Durability.parse(setting("converge.postgres.durability", "CONVERGE_POSTGRES_DURABILITY", "durable")), 0,
              null);
      ConvergePostgres instance = shared;
      Runtime.getRuntime().addShutdownHook(new Thread(instance::close, "converge-postgres-stop"));
    }
    return shared;
  }

  /**
   * Starts a new embedded PostgreSQL 17.
   *
   * @param durability whether commits are flushed to disk
   * @param port the port on 127.0.0.1, or 0 for a free one
   * @param dataDir the data directory (kept), or null for a temporary one (deleted on close)
   * @return the running server; the caller stops it with {@link #close()}
   * @throws EmbeddedServerException naming the port or directory at fault
   */
  public static ConvergePostgres embedded(Durability durability, int port, Path dataDir) {
    Objects.requireNonNull(durability, "durability");
    int p = port == 0 ? Ports.free() : port;
    Ports.requireFree(p, "Embedded PostgreSQL");
    boolean temporary = dataDir == null;
    Path dir = temporary ? Dirs.temp("converge-pg-") : dataDir;
    Dirs.requireWritable(dir, "Embedded PostgreSQL data");
    long t0 = System.nanoTime();
    try {
      EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
          .setPort(p)
          .setDataDirectory(dir)
          .setCleanDataDirectory(temporary)
          .setRegisterShutdownHook(false)
          .setServerConfig("listen_addresses", "127.0.0.1")
          .setServerConfig("wal_level", "logical")
          .setServerConfig("max_replication_slots", "20")
          .setServerConfig("max_wal_senders", "20")
          .setServerConfig("max_connections", "300")
          .setServerConfig("fsync", durability == Durability.DURABLE ? "on" : "off")
          .setServerConfig("synchronous_commit", durability == Durability.DURABLE ? "on" : "off")
          .setServerConfig("full_page_writes", durability == Durability.DURABLE ? "on" : "off");
      EmbeddedPostgres pg = builder.start();
      LOG.info("Embedded PostgreSQL started in {} ms on port {} ({})",
          (System.nanoTime() - t0) / 1_000_000, pg.getPort(), durability);
      return new ConvergePostgres(pg.getJdbcUrl("postgres", "postgres"), "postgres", "", pg, temporary ? dir : null,
          dir);
    } catch (IOException | RuntimeException e) {
      if (temporary) {
        Dirs.deleteQuietly(dir);
      }
      throw new EmbeddedServerException("Embedded PostgreSQL failed to start on 127.0.0.1:" + p
          + " with data directory " + dir + ": " + rootMessage(e), e);
    }
  }

  /**
   * An external PostgreSQL, checked by connecting once.
   *
   * @throws EmbeddedServerException naming the URL when it cannot be reached or refuses the login
   */
  public static ConvergePostgres external(String jdbcUrl, String user, String password) {
    if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException("converge.jdbc.url must start with jdbc:postgresql:, but was " + jdbcUrl);
    }
    ConvergePostgres pg = new ConvergePostgres(jdbcUrl, user, password, null, null, null);
    try (Connection c = pg.dataSource().getConnection()) {
      LOG.info("Using external PostgreSQL {} ({})", jdbcUrl, c.getMetaData().getDatabaseProductVersion());
    } catch (SQLException e) {
      throw new EmbeddedServerException("PostgreSQL at " + jdbcUrl + " is unreachable: " + rootMessage(e), e);
    }
    return pg;
  }

  /** The JDBC URL of the server's {@code postgres} database. */
  public String jdbcUrl() {
    return jdbcUrl;
  }

  /** The user name. */
  public String user() {
    return user;
  }

  /** The password (empty for the embedded server). */
  public String password() {
    return password;
  }

  /** Whether this is the embedded server (false: an external one). */
  public boolean isEmbedded() {
    return embedded != null;
  }

  /** A new, unpooled data source on the default schema ({@code public}). */
  public DataSource dataSource() {
    return dataSource(null);
  }

  /**
   * Creates a schema named {@code prefix_} + 10 random characters and returns an unpooled data source
   * whose connections use it (search_path). Use it to isolate one test class from another.
   */
  public DataSource newSchema(String prefix) {
    if (prefix == null || !SCHEMA_PREFIX.matcher(prefix).matches()) {
      throw new IllegalArgumentException("schema prefix must match " + SCHEMA_PREFIX.pattern() + ", but was " + prefix);
    }
    String schema = prefix + "_"
        + UUID.randomUUID().toString().replace("-", "").substring(0, 10).toLowerCase(Locale.ROOT);
    try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
    } catch (SQLException e) {
      throw new EmbeddedServerException("Cannot create schema " + schema + " on " + jdbcUrl + ": " + rootMessage(e), e);
    }
    return dataSource(schema);
  }

  /** An unpooled data source whose connections use {@code schema}, or the default when null. */
  public DataSource dataSource(String schema) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(jdbcUrl);
    ds.setUser(user);
    ds.setPassword(password);
    if (schema != null) {
      ds.setCurrentSchema(schema);
    }
    return ds;
  }

  /**
   * Freezes the embedded server: {@code SIGSTOP} of its postmaster (pid from {@code postmaster.pid})
   * and of every backend and auxiliary process it has. Its port still accepts TCP connections (the
   * kernel queues them) but nothing answers: queries and logins hang until {@link #thaw()}, as with a
   * stalled database host. For outage tests; idempotent while frozen.
   *
   * @throws EmbeddedServerException when the server is external or its pid cannot be read or signalled
   */
  public synchronized void freeze() {
    if (embedded == null) {
      throw new EmbeddedServerException("Cannot freeze the external PostgreSQL " + jdbcUrl + ": only the embedded one");
    }
    freezer.freeze(postmasterPid());
  }

  /** Continues the processes {@link #freeze()} stopped. Idempotent. */
  public void thaw() {
    freezer.thaw();
  }

  /** Whether the embedded server is frozen now. */
  public boolean isFrozen() {
    return freezer.isFrozen();
  }

  private long postmasterPid() {
    Path pidFile = serverDir.resolve("postmaster.pid");
    try {
      return Long.parseLong(java.nio.file.Files.readAllLines(pidFile).get(0).trim());
    } catch (IOException | RuntimeException e) {
      throw new EmbeddedServerException("Cannot read the postmaster's pid from " + pidFile + ": " + rootMessage(e), e);
    }
  }

  /** Stops the embedded server (an external one is left alone; a frozen one is thawed first). Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    freezer.thaw();
    if (embedded != null) {
      try {
        embedded.close();
      } catch (IOException e) {
        LOG.warn("Embedded PostgreSQL did not stop cleanly: {}", e.toString());
      }
      Dirs.deleteQuietly(dataDir);
    }
  }

  @Override
  public String toString() {
    return (embedded != null ? "embedded " : "external ") + jdbcUrl;
  }

  static String setting(String property, String env, String fallback) {
    String v = System.getProperty(property);
    if (v == null || v.isBlank()) {
      v = System.getenv(env);
    }
    return v == null || v.isBlank() ? fallback : v.trim();
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }

  /** Whether the embedded server flushes commits to disk. */
  public enum Durability {

    /** fsync, synchronous_commit and full_page_writes on: what production does; for benchmarks and crash tests. */
    DURABLE,
    /** all three off: faster, loses recent commits if the machine (not the process) crashes. */
    FAST;

    static Durability parse(String text) {
      try {
        return valueOf(text.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("converge.postgres.durability must be durable or fast, but was " + text, e);
      }
    }
  }
}
