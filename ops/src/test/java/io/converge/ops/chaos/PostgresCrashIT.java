package io.converge.ops.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The {@code postgres} fault: a crash restart that needs no client to be connected (a soak once found none right
 * after a database blackout: "no client backend of PostgreSQL to kill") and ends every session.
 */
@ExtendWith(PostgresExtension.class)
class PostgresCrashIT {

  @Test
  void killsABackendOfItsOwnAndEveryOtherSessionEnds(ConvergePostgres pg) throws Exception {
    DataSource db = pg.dataSource();
    try (Connection bystander = db.getConnection()) {
      long bystanderPid = pid(bystander);

      long killed = PostgresCrash.crash(db, Duration.ofSeconds(60));

      assertThat(killed).as("the backend killed is the fault's own, not a client's").isNotEqualTo(bystanderPid);
      assertThat(ProcessHandle.of(killed).map(ProcessHandle::isAlive).orElse(false)).isFalse();
      assertThatThrownBy(() -> pid(bystander)).as("the crash restart ended every session")
          .isInstanceOf(SQLException.class);
      try (Connection after = db.getConnection()) {
        assertThat(pid(after)).isPositive();
      }
    }
  }

  private static long pid(Connection c) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
