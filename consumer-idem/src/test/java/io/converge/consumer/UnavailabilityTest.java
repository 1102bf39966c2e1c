package io.converge.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.DatabaseUnavailableException;
import io.converge.producer.LateCommitFencedException;
import io.converge.producer.TransactionTimedOutException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.junit.jupiter.api.Test;

class UnavailabilityTest {

  @Test
  void outagesAnywhereInTheCauseChainAreUnavailabilities() {
    assertThat(Unavailability.isUnavailability(new BrokerUnavailableException("down", "m1", null))).isTrue();
    assertThat(Unavailability.isUnavailability(new DatabaseUnavailableException("down", null, null))).isTrue();
    assertThat(Unavailability.isUnavailability(new LateCommitFencedException("fenced", "m1", null))).isTrue();
    assertThat(Unavailability.isUnavailability(new TransactionTimedOutException("slow", null, null))).isTrue();
    // Hikari's pool timeout, wrapped twice
    assertThat(Unavailability.isUnavailability(new IllegalStateException("tx",
        new RuntimeException(new SQLTransientConnectionException("Connection is not available"))))).isTrue();
    for (String state : new String[] {"08006", "08001", "53300", "57P01", "57014", "40001", "40P01", "55P03"}) {
      assertThat(Unavailability.isUnavailability(new RuntimeException(new SQLException("x", state)))).as(state).isTrue();
    }
  }

  @Test
  void applicationFailuresAreNot() {
    assertThat(Unavailability.isUnavailability(null)).isFalse();
    assertThat(Unavailability.isUnavailability(new IllegalStateException("bug"))).isFalse();
    assertThat(Unavailability.isUnavailability(new SQLException("duplicate key", "23505"))).isFalse();
    assertThat(Unavailability.isUnavailability(new SQLException("no state"))).isFalse();
    RuntimeException loop = new RuntimeException("a");
    RuntimeException other = new RuntimeException("b", loop);
    loop.initCause(other);
    assertThat(Unavailability.isUnavailability(loop)).isFalse();
  }
}
