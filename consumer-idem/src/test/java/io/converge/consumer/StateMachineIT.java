package io.converge.consumer;

import static io.converge.consumer.PaymentState.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.core.Envelope;
import io.converge.core.Migrations;
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

/** Compare-and-swap transitions and their history rows on a real PostgreSQL. */
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
    Migrations.apply(ds, "consumer");
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

  /** The history rows of payment {@code id} in order: from>to@version[final] cause message tenant. */
  private List<String> history(long id) {
    List<String> rows = new ArrayList<>();
    try (Connection c = ds.getConnection();
        var rs = c.createStatement()
            .executeQuery("SELECT coalesce(from_state, '-') || '>' || to_state || '@' || version"
                + " || CASE WHEN final THEN '[final]' ELSE '' END || ' ' || coalesce(cause, '-') || ' '"
                + " || coalesce(message_id, '-') || ' ' || coalesce(tenant, '-') FROM converge_state_transition"
                + " WHERE machine = 'payment' AND entity_id = '" + id + "' ORDER BY id")) {
      while (rs.next()) {
        rows.add(rs.getString(1));
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return rows;
  }

  @Test
  void withoutTheHistoryTableATransitionFailsWithATypedErrorNamingTheMigration() throws Exception {
    DataSource bare = ConvergePostgres.shared().newSchema("nohistory"); // the consumer migration never applied
    Db.exec(bare, "CREATE TABLE payment (id BIGINT PRIMARY KEY, state VARCHAR(16) NOT NULL, version BIGINT NOT NULL)");
    Db.exec(bare, "INSERT INTO payment VALUES (1, 'CREATED', 0)");
    StateMachine<PaymentState> machine = PaymentState.machine(StateMachine.ConflictPolicy.FAIL);
    try (Connection c = bare.getConnection()) {
      for (int i = 0; i < 2; i++) { // every use, not only the first
        assertThatThrownBy(() -> machine.transition(c, 1L, CREATED, 0, AUTHORIZING))
            .isInstanceOf(StateHistoryMissingException.class)
            .hasMessageContaining("converge_state_transition")
            .hasMessageContaining("Migrations.apply(dataSource, \"consumer\")")
            .hasMessageContaining("history(false)");
      }
      assertThat(PaymentState.machine(StateMachine.ConflictPolicy.FAIL).recordsHistory()).isTrue();
    }
    assertThat(Db.string(bare, "SELECT state || '@' || version FROM payment WHERE id = 1")).isEqualTo("CREATED@0");
    Migrations.apply(bare, "consumer"); // applied later: the same machine records from then on
    try (Connection c = bare.getConnection()) {
      assertThat(machine.transition(c, 1L, CREATED, 0, AUTHORIZING)).isEqualTo(1);
    }
    assertThat(Db.count(bare, "SELECT count(*) FROM converge_state_transition")).isOne();
  }

  @Test
  void recordCreatedAsFirstUseWithoutTheHistoryTableFailsWithTheTypedError() throws Exception {
    DataSource bare = ConvergePostgres.shared().newSchema("nohistory_created");
    StateMachine<PaymentState> machine = PaymentState.machine(StateMachine.ConflictPolicy.FAIL);
    try (Connection c = bare.getConnection()) {
      assertThatThrownBy(() -> machine.recordCreated(c, 7L, CREATED, 0, StateMachine.Cause.NONE))
          .isInstanceOf(StateHistoryMissingException.class).hasMessageContaining("converge_state_transition");
    }
  }

  @Test
  void aMachineThatFoundTheTableOnOneDatabaseStillRefusesTypedOnAnotherWithoutIt() throws Exception {
    long id = newPayment(CREATED);
    try (Connection c = ds.getConnection()) {
      assertThat(fail.transition(c, id, AUTHORIZING).version()).isEqualTo(1); // found here
    }
    DataSource bare = ConvergePostgres.shared().newSchema("nohistory_second");
    Db.exec(bare, "CREATE TABLE payment (id BIGINT PRIMARY KEY, state VARCHAR(16) NOT NULL, version BIGINT NOT NULL)");
    Db.exec(bare, "INSERT INTO payment VALUES (" + id + ", 'CREATED', 0)");
    try (Connection c = bare.getConnection()) {
      assertThatThrownBy(() -> fail.transition(c, id, AUTHORIZING)).isInstanceOf(StateHistoryMissingException.class);
      assertThatThrownBy(() -> fail.record(c, id, CREATED, AUTHORIZING, 1, StateMachine.Cause.NONE))
          .isInstanceOf(StateHistoryMissingException.class);
    }
    assertThat(Db.string(bare, "SELECT state || '@' || version FROM payment")).isEqualTo("CREATED@0");
  }

  @Test
  void legalTransitionsMoveStateAndBumpVersion() throws Exception {
    long id = newPayment(CREATED);
    try (Connection c = ds.getConnection()) {
      assertThat(fail.transition(c, id, CREATED, 0, AUTHORIZING)).isEqualTo(1);
      assertThat(fail.transition(c, id, AUTHORIZED)).isEqualTo(new StateMachine.Versioned<>(AUTHORIZED, 2));
    }
    assertThat(row(id)).isEqualTo("AUTHORIZED@2");
    assertThat(history(id)).containsExactly("CREATED>AUTHORIZING@1 - - -", "AUTHORIZING>AUTHORIZED@2 - - -");
  }

  @Test
  void historyRowCommitsWithItsTransitionAndRollsBackWithIt() throws Exception {
    long id = newPayment(CREATED);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      fail.transition(c, id, AUTHORIZING, StateMachine.Cause.of("op alice"));
      c.rollback();
      assertThat(history(id)).as("a rolled-back transition leaves no history").isEmpty();
      fail.transition(c, id, CANCELED, new StateMachine.Cause("op alice", "msg-1", "t1"));
      assertThat(history(id)).as("uncommitted: invisible to others").isEmpty();
      c.commit();
    }
    assertThat(row(id)).isEqualTo("CANCELED@1");
    assertThat(history(id)).containsExactly("CREATED>CANCELED@1[final] op alice msg-1 t1");
  }

  @Test
  void insideAnIdempotentHandlerTheRowNamesTheConsumerAndTheMessage() throws Exception {
    long id = newPayment(CREATED);
    IdempotentHandler h = IdempotentHandler.builder().group("charges").dataSource(ds)
        .handler((c, m) -> fail.transition(c, id, AUTHORIZING)).build();
    IncomingMessage m = IncomingMessage.builder().topic("payments").header(Envelope.MESSAGE_ID, "msg-" + id)
        .header(Envelope.TENANT, "acme").build();
    assertThat(h.handle(m)).isEqualTo(Outcome.PROCESSED);
    assertThat(h.handle(m)).isEqualTo(Outcome.DUPLICATE);
    assertThat(history(id)).containsExactly("CREATED>AUTHORIZING@1 consumer charges msg-" + id + " acme");
    try (Connection c = ds.getConnection()) {
      fail.transition(c, id, AUTHORIZED);
    }
    assertThat(history(id)).as("outside the handler: no context leaks").last()
        .isEqualTo("AUTHORIZING>AUTHORIZED@2 - - -");
  }

  @Test
  void jpaPathRecordsThroughRecordAndHistoryCanBeTurnedOff() throws Exception {
    long id = newPayment(CREATED);
    StateMachine<PaymentState> silent = StateMachine.builder("payment", PaymentState.class)
        .allow(CREATED, AUTHORIZING).history(false).build();
    try (Connection c = ds.getConnection()) {
      silent.transition(c, id, AUTHORIZING);
      assertThat(history(id)).isEmpty();
      fail.record(c, id, AUTHORIZING, AUTHORIZED, 2, StateMachine.Cause.of("jpa"));
      assertThatThrownBy(() -> fail.record(c, id, AUTHORIZED, REFUNDED, 3, StateMachine.Cause.NONE))
          .isInstanceOf(IllegalTransitionException.class);
    }
    assertThat(history(id)).containsExactly("AUTHORIZING>AUTHORIZED@2 jpa - -");
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
    assertThat(history(id)).isEmpty();
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
    assertThat(history(id)).as("the stale transition wrote no row").containsExactly("CREATED>AUTHORIZING@1 - - -");
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
      assertThat(history(id)).as("only the winner's row").singleElement().asString()
          .isEqualTo("CREATED>" + row(id).replace("@1", "") + "@1" + (row(id).startsWith("CANCELED") ? "[final]" : "")
              + " - - -");
    }
  }

  @Test
  void concurrentTransitionsOfDifferentEntitiesEachWriteExactlyTheirOwnRow() throws Exception {
    int n = 8;
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add(newPayment(CREATED));
    }
    ExecutorService pool = Executors.newFixedThreadPool(4);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    for (long id : ids) {
      done.add(pool.submit(() -> {
        go.await();
        try (Connection c = ds.getConnection()) {
          c.setAutoCommit(false);
          fail.transition(c, id, AUTHORIZING, new StateMachine.Cause("worker", "m-" + id, null));
          c.commit();
        }
        return null;
      }));
    }
    go.countDown();
    for (Future<?> f : done) {
      f.get(10, TimeUnit.SECONDS);
    }
    pool.shutdown();
    for (long id : ids) {
      assertThat(history(id)).containsExactly("CREATED>AUTHORIZING@1 worker m-" + id + " -");
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
    assertThat(history(id)).as("the accepted duplicate moved nothing, recorded nothing").hasSize(1);
  }
}
