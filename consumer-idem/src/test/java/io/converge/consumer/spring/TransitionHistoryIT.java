package io.converge.consumer.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.consumer.StateMachine;
import io.converge.core.Migrations;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link TransitionHistory} writes its row only on the connection of the running transaction: under a transaction
 * manager that does not hold a connection of its data source (another data source's manager), the row would
 * commit on its own, so it is refused with a typed error.
 */
@ExtendWith(PostgresExtension.class)
class TransitionHistoryIT {

  enum Door {
    OPEN, CLOSED
  }

  private static final StateMachine<Door> DOOR = StateMachine.builder("door", Door.class)
      .allow(Door.OPEN, Door.CLOSED).allow(Door.CLOSED, Door.OPEN).build();

  @Test
  void underAnotherDataSourcesTransactionManagerTheRowIsRefusedAndNothingCommitsOnItsOwn(DataSource ds) {
    Migrations.apply(ds, "consumer");
    TransitionHistory history = TransitionHistory.of(ds);
    DataSource other = ConvergePostgres.shared().newSchema("otherdb");
    TransactionTemplate otherTx = new TransactionTemplate(new DataSourceTransactionManager(other));
    JdbcTemplate jdbc = new JdbcTemplate(ds);

    assertThatThrownBy(() -> otherTx.executeWithoutResult(
        status -> history.created(DOOR, 1L, Door.OPEN, 0, StateMachine.Cause.of("test"))))
        .isInstanceOf(TransitionHistoryNotBoundException.class)
        .hasMessageContaining("door 1")
        .hasMessageContaining("DataSourceTransactionManager");
    assertThatThrownBy(() -> otherTx.executeWithoutResult(status -> {
      jdbc.queryForObject("SELECT 1", Integer.class); // binds a plain autocommit connection of ds to the sync
      history.transition(DOOR, 2L, Door.OPEN, Door.CLOSED, 1, StateMachine.Cause.NONE);
    })).isInstanceOf(TransitionHistoryNotBoundException.class);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_state_transition WHERE machine = 'door'",
        Long.class)).as("no row committed apart from its transaction").isZero();

    TransactionTemplate ownTx = new TransactionTemplate(new DataSourceTransactionManager(ds));
    ownTx.executeWithoutResult(status -> {
      history.created(DOOR, 3L, Door.OPEN, 0, StateMachine.Cause.NONE);
      status.setRollbackOnly();
    });
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_state_transition WHERE machine = 'door'",
        Long.class)).as("rolled back with its transaction").isZero();
    ownTx.executeWithoutResult(status -> history.created(DOOR, 3L, Door.OPEN, 0, StateMachine.Cause.NONE));
    assertThat(jdbc.queryForObject("SELECT count(*) FROM converge_state_transition WHERE machine = 'door'",
        Long.class)).isOne();
  }
}
