package io.converge.pulsar;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.Migrations;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/** The database side of the Pulsar backend's ITs: a fresh migrated schema and its open transaction rows. */
public final class PulsarSchemas {

  private PulsarSchemas() {
  }

  /** A new schema named after {@code prefix} with the producer's and the Pulsar backend's migrations. */
  public static DataSource migrated(String prefix) {
    DataSource db = ConvergePostgres.shared().newSchema(prefix);
    Migrations.apply(db, "producer");
    Migrations.apply(db, "pulsar");
    return db;
  }

  /** The rows of {@code converge_pulsar_txn}: the Pulsar transactions not yet finished or recovered. */
  public static long openRows(DataSource db) {
    return new JdbcTemplate(db).queryForObject("SELECT count(*) FROM converge_pulsar_txn", Long.class);
  }
}
