package io.converge.producer.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.Ports;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.DatabaseRefusedException;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.MessageIds;
import io.converge.producer.TxnProducer;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendFactory;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.TxnBackend;
import java.util.function.Function;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The producer tells a database that refuses from one that is gone (one classifier, {@code DatabaseErrors}): a
 * connection refused for its credentials (SQLState class 28) or a log that is not there (42P01, migrations not
 * applied) is a configuration error to fix, a {@link DatabaseRefusedException} with its SQLState; only a
 * connection that cannot be had is an outage. Before, both sites reported every SQL error as an outage.
 */
class DatabaseRefusalIT {

  /** A backend that is never asked for anything: the unit fails before it begins. */
  private static final BackendFactory NO_BACKEND = new BackendFactory() {

    @Override
    public String name() {
      return "none";
    }

    @Override
    public TxnBackend create(BackendContext context) {
      return new TxnBackend() {

        @Override
        public BackendTransaction begin() {
          throw new AssertionError("a unit began without a connection");
        }

        @Override
        public void close() {
        }
      };
    }
  };

  static Stream<Arguments> refusals() {
    ConvergePostgres pg = ConvergePostgres.shared();
    PGSimpleDataSource unknownRole = new PGSimpleDataSource();
    unknownRole.setUrl(pg.jdbcUrl());
    unknownRole.setUser("converge_no_such_role");
    unknownRole.setPassword("wrong");
    DataSource noLog = pg.newSchema("nolog");
    return Stream.of(
        Arguments.of("a unit of work, as a role the server does not know", unknownRole,
            (Function<DataSource, Runnable>) db -> () -> emptyUnit(db), "28"),
        Arguments.of("the log's outcome, before the migrations", noLog,
            (Function<DataSource, Runnable>) db -> () -> new TxnLog(db).outcome(MessageIds.shared().next()), "42P01"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusals")
  void aRefusalIsNotAnOutage(String name, DataSource db, Function<DataSource, Runnable> call, String stateClass) {
    assertThatThrownBy(() -> call.apply(db).run()).as(name)
        .isInstanceOf(DatabaseRefusedException.class)
        .satisfies(e -> assertThat(((DatabaseRefusedException) e).sqlState()).startsWith(stateClass));
  }

  @Test
  void aDatabaseThatCannotBeReachedIsStillAnOutage() {
    PGSimpleDataSource nowhere = new PGSimpleDataSource();
    nowhere.setUrl("jdbc:postgresql://127.0.0.1:" + Ports.free() + "/postgres?connectTimeout=2");
    assertThatThrownBy(() -> emptyUnit(nowhere))
        .isInstanceOf(DatabaseUnavailableException.class)
        .hasMessageStartingWith("No database connection for a unit of work of group refusal");
    assertThatThrownBy(() -> new TxnLog(nowhere).outcome("m-1"))
        .isInstanceOf(DatabaseUnavailableException.class)
        .hasMessageStartingWith("Cannot read the transaction log for message m-1");
  }

  private static void emptyUnit(DataSource db) {
    try (TxnProducer producer = TxnProducer.builder().group("refusal").dataSource(db).backend(NO_BACKEND).build()) {
      producer.inTransaction(tx -> null);
    }
  }
}
