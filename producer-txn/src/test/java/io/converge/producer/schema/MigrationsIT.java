package io.converge.producer.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.Ports;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.producer.ConvergeException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** Versioned migrations of one module, on the embedded PostgreSQL and on an external one. */
class MigrationsIT {

  @Test
  void appliesOnceInOrderWithItsOwnHistoryTable() throws Exception {
    DataSource db = ConvergePostgres.shared().newSchema("migrations");
    assertThat(Migrations.apply(db, "schematest")).isEqualTo(2);
    assertThat(Migrations.apply(db, "schematest")).as("second run is a no-op").isZero();
    assertThat(count(db, "SELECT count(*) FROM converge_schema_history_schematest WHERE success")).isEqualTo(2);
    assertThat(count(db, "SELECT count(*) FROM pg_indexes WHERE indexname = 'converge_schematest_note' AND schemaname = current_schema()")).isEqualTo(1);
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
  void unreachableDatabaseIsATypedErrorNamingTheModule() {
    PGSimpleDataSource nowhere = new PGSimpleDataSource();
    nowhere.setUrl("jdbc:postgresql://127.0.0.1:" + Ports.free() + "/postgres?connectTimeout=2");
    assertThatThrownBy(() -> Migrations.apply(nowhere, "schematest"))
        .isInstanceOf(ConvergeException.class)
        .hasMessageContaining("'schematest'");
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
    try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT current_schema()")) {
      rs.next();
      return rs.getString(1);
    }
  }
}
