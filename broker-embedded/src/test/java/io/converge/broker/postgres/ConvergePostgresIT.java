package io.converge.broker.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.EmbeddedServerException;
import io.converge.broker.Ports;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.postgresql.ds.PGSimpleDataSource;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The embedded PostgreSQL is a real server, configured as documented, and fails clearly. */
@ExtendWith(PostgresExtension.class)
class ConvergePostgresIT {

  @Test
  void sharedServerIsDurableLogicalAndIsolatesSchemas(ConvergePostgres pg, DataSource classSchema) throws Exception {
    assertThat(setting(pg.dataSource(), "server_version_num")).startsWith("17");
    assertThat(setting(pg.dataSource(), "wal_level")).isEqualTo("logical");
    assertThat(setting(pg.dataSource(), "fsync")).isEqualTo("on");
    assertThat(setting(pg.dataSource(), "synchronous_commit")).isEqualTo("on");

    try (Connection c = classSchema.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE t (id int primary key)");
      s.execute("INSERT INTO t VALUES (1)");
    }
    DataSource other = pg.newSchema("other");
    try (Connection c = other.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 't'")) {
      rs.next();
      assertThat(rs.getInt(1)).as("a table of another schema is not visible").isZero();
    }
  }

  @Test
  void frozenServerAnswersNothingUntilThawed(ConvergePostgres pg) throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection open = pg.dataSource().getConnection()) {
      pg.freeze();
      try {
        assertThat(pg.isFrozen()).isTrue();
        Future<Integer> query = pool.submit(() -> {
          try (Statement s = open.createStatement(); ResultSet rs = s.executeQuery("SELECT 42")) {
            rs.next();
            return rs.getInt(1);
          }
        });
        assertThatThrownBy(() -> query.get(2, TimeUnit.SECONDS)).as("a query on an open connection hangs")
            .isInstanceOf(TimeoutException.class);
        PGSimpleDataSource impatient = (PGSimpleDataSource) pg.dataSource();
        impatient.setLoginTimeout(2);
        assertThatThrownBy(impatient::getConnection).as("a new connection cannot log in")
            .isInstanceOf(SQLException.class);
        pg.thaw();
        assertThat(pg.isFrozen()).isFalse();
        assertThat(query.get(30, TimeUnit.SECONDS)).as("the pending query is answered once thawed").isEqualTo(42);
        assertThat(setting(pg.dataSource(), "wal_level")).isEqualTo("logical");
      } finally {
        pg.thaw();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void externalServerCannotBeFrozen(ConvergePostgres shared) {
    ConvergePostgres external = ConvergePostgres.external(shared.jdbcUrl(), shared.user(), shared.password());
    assertThatThrownBy(external::freeze).isInstanceOf(EmbeddedServerException.class)
        .hasMessageContaining(shared.jdbcUrl());
  }

  @Test
  void externalServerIsUsedThroughItsJdbcUrl(ConvergePostgres shared) throws Exception {
    // the shared server stands in for "external": the same code path as a configured converge.jdbc.url
    ConvergePostgres external = ConvergePostgres.external(shared.jdbcUrl(), shared.user(), shared.password());
    assertThat(external.isEmbedded()).isFalse();
    assertThat(setting(external.dataSource(), "server_version_num")).startsWith("17");
  }

  @Test
  void unreachableExternalServerIsNamed() {
    int closed = Ports.free();
    String url = "jdbc:postgresql://127.0.0.1:" + closed + "/postgres?connectTimeout=2";
    assertThatThrownBy(() -> ConvergePostgres.external(url, "postgres", ""))
        .isInstanceOf(EmbeddedServerException.class)
        .hasMessageContaining(url)
        .hasMessageContaining("unreachable");
  }

  @Test
  void portInUseIsNamed() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      assertThatThrownBy(() -> ConvergePostgres.embedded(ConvergePostgres.Durability.FAST, taken.getLocalPort(), null))
          .isInstanceOf(EmbeddedServerException.class)
          .hasMessageContaining("port " + taken.getLocalPort());
    }
  }

  @Test
  void unwritableDataDirIsNamed(@TempDir Path tmp) throws Exception {
    Path dir = Files.createFile(tmp.resolve("a-file")).resolve("pgdata");
    assertThatThrownBy(() -> ConvergePostgres.embedded(ConvergePostgres.Durability.FAST, 0, dir))
        .isInstanceOf(EmbeddedServerException.class)
        .hasMessageContaining(dir.toString())
        .hasMessageContaining("not writable");
  }

  private static String setting(DataSource ds, String name) throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SHOW " + name)) {
      rs.next();
      return rs.getString(1);
    }
  }
}
