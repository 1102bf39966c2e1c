package io.converge.core.internal;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Sends a unit's last log write and its {@code COMMIT} in one round trip (a producer's
 * {@code io.converge.producer.spi.CommitWrite}): with the PostgreSQL JDBC driver a prepared statement of several SQL statements goes to the server as one
 * pipeline, and an error in one of them skips the rest (the COMMIT never runs; the transaction is
 * aborted and the caller rolls it back). Other drivers get the write and then {@code commit()}. Stateless.
 */
public final class PipelinedCommit {

  private static final String PGJDBC = "PostgreSQL JDBC Driver";

  private PipelinedCommit() {
  }

  /** Whether {@code connection}'s driver pipelines {@link #withCommit} statements (pgjdbc). */
  public static boolean supported(Connection connection) throws SQLException {
    return PGJDBC.equals(connection.getMetaData().getDriverName());
  }

  /** {@code sql} (one or more statements) followed by {@code COMMIT}, as one prepared statement. */
  public static String withCommit(String sql) {
    return sql.strip() + ";\nCOMMIT";
  }

  /**
   * After a {@link #withCommit} statement ran: tells the driver and a pool wrapping it that the
   * transaction ended (pgjdbc sends nothing: it knows from the server that no transaction is open).
   */
  public static void committed(Connection connection) throws SQLException {
    connection.commit();
  }
}
