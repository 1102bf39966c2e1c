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

  /**
   * The Pulsar transactions not yet finished or recovered, in both tables of the log ({@code converge_pulsar_unit},
   * and {@code converge_pulsar_txn} from before pulsar migration V4).
   */
  public static long openRows(DataSource db) {
    return new JdbcTemplate(db).queryForObject("SELECT count(*) FROM converge_pulsar_logged", Long.class);
  }

  /** The rows of {@code table} (e.g. {@code converge_pulsar_unit}). */
  public static long rows(DataSource db, String table) {
    return new JdbcTemplate(db).queryForObject("SELECT count(*) FROM " + table, Long.class);
  }
}
