package io.converge.consumer;

import static io.converge.consumer.PaymentState.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.PostgresExtension;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Compare-and-swap transitions on a real PostgreSQL. */
@ExtendWith(PostgresExtension.class)
class StateMachineIT {

  private static final AtomicLong IDS = new AtomicLong();

  private final DataSource ds;
  private final StateMachine<PaymentState> fail = PaymentState.machine(StateMachine.ConflictPolicy.FAIL);

  StateMachineIT(DataSource ds) {
    this.ds = ds;
  }

  @BeforeAll
  static void schema(DataSource ds) {
    Db.exec(ds,
        "CREATE TABLE payment (id BIGINT PRIMARY KEY, state VARCHAR(16) NOT NULL, version BIGINT NOT NULL DEFAULT 0)");
  }

  private long newPayment(PaymentState state) {
    long id = IDS.incrementAndGet();
    Db.exec(ds, "INSERT INTO payment (id, state) VALUES (" + id + ", '" + state + "')");
    return id;
  }

  private String row(long id) {
    return Db.string(ds, "SELECT state || '@' || version FROM payment WHERE id = " + id);
  }

  @Test
  void legalTransitionsMoveStateAndBumpVersion() throws Exception {
    long id = newPayment(CREATED);
    try (Connection c = ds.getConnection()) {
      assertThat(fail.transition(c, id, CREATED, 0, AUTHORIZING)).isEqualTo(1);
      assertThat(fail.transition(c, id, AUTHORIZED)).isEqualTo(new StateMachine.Versioned<>(AUTHORIZED, 2));
    }
    assertThat(row(id)).isEqualTo("AUTHORIZED@2");
  }

  @Test
  void illegalTransitionIsRefusedWithATypedErrorAndChangesNothing() throws Exception {
    long id = newPayment(CREATED);
    try (Connection c = ds.getConnection()) {
      assertThatThrownBy(() -> fail.transition(c, id, CAPTURED))
          .isInstanceOfSatisfying(IllegalTransitionException.class, e -> {
            assertThat(e.entityId()).isEqualTo(id);
            assertThat(e.from()).isEqualTo("CREATED");
            assertThat(e.to()).isEqualTo("CAPTURED");
          });
    }
    assertThat(row(id)).isEqualTo("CREATED@0");
  }

  @Test
  void staleVersionIsDetectedNeverOverwritten() throws Exception {
    long id = newPayment(CREATED);
    try (Connection c = ds.getConnection()) {
      fail.transition(c, id, CREATED, 0, AUTHORIZING);
      assertThatThrownBy(() -> fail.transition(c, id, CREATED, 0, CANCELED))
          .isInstanceOfSatisfying(StaleStateException.class, e -> {
            assertThat(e.expectedState()).isEqualTo("CREATED");
            assertThat(e.expectedVersion()).isZero();
          })
          .hasMessageContaining("but it is AUTHORIZING at version 1");
    }
    assertThat(row(id)).isEqualTo("AUTHORIZING@1");
  }

  @Test
  void twoConcurrentTransitionsFromTheSameVersionExactlyOneWins() throws Exception {
    for (int round = 0; round < 5; round++) {
      long id = newPayment(CREATED);
      ExecutorService pool = Executors.newFixedThreadPool(2);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Object>> results = new ArrayList<>();
      for (PaymentState target : List.of(AUTHORIZING, CANCELED)) {
        results.add(pool.submit(() -> {
          try (Connection c = ds.getConnection()) {
            go.await();
            return fail.transition(c, id, CREATED, 0, target);
          } catch (StaleStateException e) {
            return e;
          }
        }));
      }
      go.countDown();
      List<Object> outcomes = new ArrayList<>();
      for (Future<Object> f : results) {
        outcomes.add(f.get(10, TimeUnit.SECONDS));
      }
      pool.shutdown();
      assertThat(outcomes).filteredOn(o -> o instanceof Long).hasSize(1);
      assertThat(outcomes).filteredOn(o -> o instanceof StaleStateException).hasSize(1);
      assertThat(row(id)).matches("(AUTHORIZING|CANCELED)@1");
    }
  }

  @Test
  void acceptIfAlreadyInTargetMakesADuplicateEventQuiet() throws Exception {
    StateMachine<PaymentState> quiet = PaymentState.machine(StateMachine.ConflictPolicy.ACCEPT_IF_ALREADY_IN_TARGET);
    long id = newPayment(CREATED);
    try (Connection c = ds.getConnection()) {
      assertThat(quiet.transition(c, id, AUTHORIZING).version()).isEqualTo(1);
      assertThat(quiet.transition(c, id, AUTHORIZING)).isEqualTo(new StateMachine.Versioned<>(AUTHORIZING, 1));
      assertThatThrownBy(() -> fail.transition(c, id, AUTHORIZING)).isInstanceOf(IllegalTransitionException.class);
    }
    assertThat(row(id)).isEqualTo("AUTHORIZING@1");
  }
}
