package io.converge.core;

import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.Ports;
import io.converge.broker.postgres.ConvergePostgres;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.LoggerFactory;

/** Versioned migrations of one module, on the embedded PostgreSQL and on an external one. */
class MigrationsIT {

  @Test
  void appliesOnceInOrderWithItsOwnHistoryTable() throws Exception {
    DataSource db = ConvergePostgres.shared().newSchema("migrations");
    assertThat(Migrations.apply(db, "schematest")).isEqualTo(2);
    assertThat(Migrations.apply(db, "schematest")).as("second run is a no-op").isZero();
    assertThat(count(db, "SELECT count(*) FROM converge_schema_history_schematest WHERE success")).isEqualTo(2);
    assertThat(count(db,
        "SELECT count(*) FROM pg_indexes WHERE indexname = 'converge_schematest_note' AND schemaname = current_schema()"))
        .isEqualTo(1);
  }

  @Test
  void appliesOnAnExternalServerGivenByUrl() throws Exception {
    ConvergePostgres shared = ConvergePostgres.shared();
    // an "external" server is reached by JDBC URL only: the same path as converge.jdbc.url
    ConvergePostgres external = ConvergePostgres.external(shared.jdbcUrl(), shared.user(), shared.password());
    DataSource isolated = shared.newSchema("external");
    String schema = currentSchema(isolated);
    DataSource db = external.dataSource(schema);
    assertThat(Migrations.apply(db, "schematest")).isEqualTo(2);
    assertThat(count(db, "SELECT count(*) FROM converge_schematest")).isZero();
  }

  @Test
  void unreachableDatabaseIsATypedErrorNamingTheModuleAndTheWait() {
    PGSimpleDataSource nowhere = new PGSimpleDataSource();
    nowhere.setUrl("jdbc:postgresql://127.0.0.1:" + Ports.free() + "/postgres?connectTimeout=2");
    assertThatThrownBy(
        () -> Migrations.apply(nowhere, "schematest", DatabaseWait.upTo(Duration.ofSeconds(2), "test.wait")))
        .isInstanceOf(DatabaseUnavailableException.class)
        .hasMessageContaining("'schematest'")
        .hasMessageContaining("test.wait=2s");
  }

  @Test
  void waitsForAFrozenDatabaseAndLogsEachWait() throws Exception {
    ConvergePostgres pg = ConvergePostgres.shared();
    PGSimpleDataSource db = (PGSimpleDataSource) pg.newSchema("frozen");
    db.setLoginTimeout(2); // shorter than the freeze, as a pool's timeout is shorter than an outage
    ListAppender<ILoggingEvent> log = capture();
    pg.freeze();
    // thawed once the first wait is logged (a login timed out against the frozen server), not after a fixed time
    CompletableFuture<Void> thawer = CompletableFuture.runAsync(() -> {
      await("the first wait logged").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
          .until(() -> logged(log, "(attempt 1, next in"));
      pg.thaw();
    });
    try {
      assertThat(Migrations.apply(db, "schematest")).isEqualTo(2);
    } finally {
      pg.thaw();
      thawer.cancel(true);
      release(log);
    }
    assertThat(log.list).map(ILoggingEvent::getFormattedMessage)
        .anySatisfy(m -> assertThat(m).contains("waiting for the database", "'schematest'", "(attempt 1, next in"));
  }

  @Test
  void aDatabaseFrozenBeyondTheLimitFailsNamingTheLimit() throws Exception {
    ConvergePostgres pg = ConvergePostgres.shared();
    PGSimpleDataSource db = (PGSimpleDataSource) pg.newSchema("frozenlong");
    db.setLoginTimeout(1);
    pg.freeze();
    try {
      assertThatThrownBy(() -> Migrations.apply(db, "schematest", DatabaseWait.upTo(Duration.ofSeconds(3),
          "converge.startup.database-wait")))
          .isInstanceOf(DatabaseUnavailableException.class)
          .hasMessageContaining("converge.startup.database-wait=3s")
          .hasMessageContaining("'schematest'");
    } finally {
      pg.thaw();
    }
  }

  @Test
  void aBadLimitIsRefusedWithItsValue() {
    assertThatThrownBy(() -> DatabaseWait.upTo(Duration.ofSeconds(-1), "converge.startup.database-wait"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("converge.startup.database-wait must be between 0 and 1h, but was PT-1S");
  }

  static ListAppender<ILoggingEvent> capture() {
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    ((Logger) LoggerFactory.getLogger(DatabaseWait.class)).addAppender(appender);
    return appender;
  }

  /** Whether {@code appender} holds a message containing {@code text} (read under the appender's own lock). */
  static boolean logged(ListAppender<ILoggingEvent> appender, String text) {
    synchronized (appender) {
      return appender.list.stream().anyMatch(e -> e.getFormattedMessage().contains(text));
    }
  }

  static void release(ListAppender<ILoggingEvent> appender) {
    ((Logger) LoggerFactory.getLogger(DatabaseWait.class)).detachAppender(appender);
  }

  @Test
  void badModuleNameIsRefusedWithTheValue() {
    assertThatThrownBy(() -> Migrations.apply(new PGSimpleDataSource(), "Bad-Name"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("but was Bad-Name");
  }

  private static int count(DataSource db, String sql) throws Exception {
    try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static String currentSchema(DataSource db) throws Exception {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_schema()")) {
      rs.next();
      return rs.getString(1);
    }
  }
}
