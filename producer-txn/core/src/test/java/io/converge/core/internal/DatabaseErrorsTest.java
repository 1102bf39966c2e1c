package io.converge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.DatabaseRefusedException;
import io.converge.core.DatabaseUnavailableException;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Issue 31.3: the one table of database errors; only a lost or refused connection is an outage. */
class DatabaseErrorsTest {

  @ParameterizedTest(name = "{0} outage={1}")
  @CsvSource({
      // lost or refused connections
      "08000, true", "08001, true", "08003, true", "08004, true", "08006, true", "08P01, true",
      "57P01, true", "57P02, true", "57P03, true", "57P05, true", "53300, true",
      // answers of the database about the work
      "25P02, false", "23505, false", "23503, false", "23514, false", "22001, false", "22P05, false",
      "40001, false", "40P01, false", "55P03, false", "57014, false", "57P04, false", "54000, false",
      "53100, false", "53200, false", "53400, false", "28P01, false", "3D000, false", "42P01, false",
      "XX000, false", "58030, false", "'', false"})
  void onlyALostOrRefusedConnectionIsAnOutage(String sqlState, boolean outage) {
    SQLException e = new SQLException("boom", sqlState.isEmpty() ? null : sqlState);
    assertThat(DatabaseErrors.isOutage(e)).as(sqlState).isEqualTo(outage);
    assertThat(DatabaseErrors.isOutageState(e.getSQLState())).as(sqlState).isEqualTo(outage);
    assertThat(DatabaseErrors.translate("Cannot publish", "m-1", e))
        .isInstanceOf(outage ? DatabaseUnavailableException.class : DatabaseRefusedException.class);
  }

  @Test
  void jdbcConnectionTypesAreOutagesWhateverTheirState() {
    assertThat(DatabaseErrors.isOutage(new SQLTransientConnectionException("pool timed out"))).isTrue();
    assertThat(DatabaseErrors.isOutage(new SQLNonTransientConnectionException("gone", "HY000"))).isTrue();
    assertThat(DatabaseErrors.isOutage(new SQLRecoverableException("reconnect"))).isTrue();
  }

  @Test
  void timeoutsAndRollbacksAreNotOutages() {
    assertThat(DatabaseErrors.isOutage(new SQLTimeoutException("statement timeout", "57014"))).isFalse();
    assertThat(DatabaseErrors.isOutage(new SQLTransactionRollbackException("deadlock", "40P01"))).isFalse();
  }

  @Test
  void aSocketFailureIsAnOutageOnlyBelowAnSqlException() {
    assertThat(DatabaseErrors.isOutage(new SQLException("I/O", null, new ConnectException("refused")))).isTrue();
    assertThat(DatabaseErrors.isOutage(new SQLException("I/O", null, new IOException(new EOFException())))).isTrue();
    assertThat(DatabaseErrors.isOutage(new SQLException("I/O", null, new SocketException("reset")))).isTrue();
    // a handler's own HTTP call is not a database outage
    assertThat(DatabaseErrors.isOutage(new ConnectException("refused"))).isFalse();
    assertThat(DatabaseErrors.isOutage(new SQLException("other", null, new IOException("disk")))).isFalse();
  }

  @Test
  void theOutageIsFoundAnywhereInTheCauseChain() {
    SQLException lost = new SQLException("terminated", "57P01");
    RuntimeException wrapped = new RuntimeException(new IllegalStateException(lost));
    assertThat(DatabaseErrors.outageIn(wrapped)).isSameAs(lost);
    assertThat(DatabaseErrors.outageIn(new RuntimeException(new SQLException("dup", "23505")))).isNull();
    assertThat(DatabaseErrors.outageIn(null)).isNull();
  }

  @Test
  void translateCarriesTheStateTheIdAndTheCause() {
    SQLException aborted = new SQLException("current transaction is aborted", "25P02");
    var refused = (DatabaseRefusedException) DatabaseErrors.translate("Cannot publish message m-1", "m-1", aborted);
    assertThat(refused.sqlState()).isEqualTo("25P02");
    assertThat(refused.messageId()).isEqualTo("m-1");
    assertThat(refused).hasCause(aborted).hasMessageContaining("SQLState 25P02");
    SQLException nested = new SQLException("batch", null, new SQLException("unique", "23505"));
    assertThat(((DatabaseRefusedException) DatabaseErrors.translate("x", null, nested)).sqlState())
        .isEqualTo("23505");
  }

  @Test
  void springResourceFailuresCountOnlyWithoutAnSqlExceptionBelow() {
    assertThat(DatabaseErrors.isOutage(new DataAccessResourceFailureException("no pool"))).isTrue();
    assertThat(DatabaseErrors.isOutage(new CannotGetJdbcConnectionException("no connection",
        new SQLTransientConnectionException("timeout")))).isFalse(); // the SQLException decides, one step below
    assertThat(DatabaseErrors.outageIn(new CannotGetJdbcConnectionException("no connection",
        new SQLTransientConnectionException("timeout")))).isNotNull();
    assertThat(DatabaseErrors.outageIn(new DataAccessResourceFailureException("disk full",
        new SQLException("could not extend file", "53100")))).isNull();
  }
}
