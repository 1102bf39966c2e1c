package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.Ports;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.DatabaseRefusedException;
import io.converge.core.DatabaseUnavailableException;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * {@link OutboxRelay#drainOnce()} tells a database that refuses the relay's statements (no outbox table: the
 * migrations were not applied, SQLState 42P01) from one that cannot be reached: only the second is an outage.
 */
class DrainRefusalIT {

  @Test
  void aMissingOutboxIsARefusalAndAnUnreachableDatabaseAnOutage() {
    DataSource noOutbox = ConvergePostgres.shared().newSchema("nooutbox");
    try (OutboxRelay relay = OutboxRelay.builder().name("refusal").dataSource(noOutbox).sink(new DiscardingSink())
        .build()) {
      assertThatThrownBy(relay::drainOnce)
          .isInstanceOf(DatabaseRefusedException.class)
          .hasMessageStartingWith("Outbox relay refusal cannot drain the outbox")
          .satisfies(e -> assertThat(((DatabaseRefusedException) e).sqlState()).isEqualTo("42P01"));
    }
    PGSimpleDataSource nowhere = new PGSimpleDataSource();
    nowhere.setUrl("jdbc:postgresql://127.0.0.1:" + Ports.free() + "/postgres?connectTimeout=2");
    try (OutboxRelay relay = OutboxRelay.builder().name("refusal").dataSource(nowhere).sink(new DiscardingSink())
        .build()) {
      assertThatThrownBy(relay::drainOnce)
          .isInstanceOf(DatabaseUnavailableException.class)
          .hasMessageStartingWith("Outbox relay refusal cannot drain the outbox");
    }
  }
}
