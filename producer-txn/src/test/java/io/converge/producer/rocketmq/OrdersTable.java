package io.converge.producer.rocketmq;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.Migrations;
import io.converge.producer.testing.Rows;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/** A schema of its own with the producer's tables and an {@code orders} table: the business write of the backend's tests. */
final class OrdersTable {

  private final DataSource db;

  private OrdersTable(DataSource db) {
    this.db = db;
  }

  /** A new schema named after {@code name}, migrated, with an empty {@code orders} table. */
  static OrdersTable create(String name) {
    DataSource db = ConvergePostgres.shared().newSchema(name);
    Migrations.apply(db, "producer");
    new JdbcTemplate(db).execute("CREATE TABLE orders (id text PRIMARY KEY)");
    return new OrdersTable(db);
  }

  DataSource db() {
    return db;
  }

  /** Inserts order {@code id} on {@code c} (the unit of work's connection). */
  static void insert(Connection c, String id) throws SQLException {
    Rows.insert(c, "orders", id);
  }

  /** How many orders {@code id} are committed (0 or 1). */
  int count(String id) throws SQLException {
    try (var c = db.getConnection(); var s = c.prepareStatement("SELECT count(*) FROM orders WHERE id = ?")) {
      s.setString(1, id);
      try (var rs = s.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
