package io.converge.saga.tcc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * {@link TccBarrier#runAndCommit}, the fast path: every test of {@link TccBarrierIT} again through it (the same
 * outcomes, results, exceptions and committed runs as {@link TccBarrier#run}), and what only it has: a refused call's
 * body ran and its writes were rolled back, the connection's state after the barrier's own COMMIT, and two fast calls
 * of one branch serializing on the business row their bodies share.
 */
class TccBarrierCommitIT extends TccBarrierIT {

  @Override
  boolean fast() {
    return true;
  }

  @Test
  void aRefusedCallsBodyRanButItsWritesAreRolledBack() throws Exception {
    String b = unique();
    committed(call(b, TccOperation.TRY));
    assertThat(committed(call(b, TccOperation.TRY)).outcome()).isEqualTo(TccOutcome.DUPLICATE);
    committed(call(b, TccOperation.CONFIRM));
    assertThat(committed(call(b, TccOperation.CONFIRM)).outcome()).isEqualTo(TccOutcome.DUPLICATE);
    assertThatThrownBy(() -> committed(call(b, TccOperation.CANCEL))).isInstanceOf(CancelAfterConfirmException.class);
    // the fast path ran each Try and Confirm body before the barrier refused it; only the first Try's and Confirm's
    // writes stayed; a Cancel takes the slow path (its barrier rows first), so a refused one never runs its body
    assertThat(invocations(TccOperation.TRY, b)).isEqualTo(2);
    assertThat(invocations(TccOperation.CONFIRM, b)).isEqualTo(2);
    assertThat(invocations(TccOperation.CANCEL, b)).isZero();
    assertThat(runs(TccOperation.TRY, b)).isOne();
    assertThat(runs(TccOperation.CONFIRM, b)).isOne();
    assertThat(runs(TccOperation.CANCEL, b)).isZero();

    String empty = unique();
    assertThat(committed(call(empty, TccOperation.CANCEL)).outcome()).isEqualTo(TccOutcome.EMPTY_ROLLBACK);
    assertThat(committed(call(empty, TccOperation.TRY)).outcome()).isEqualTo(TccOutcome.HANGING_REFUSED);
    assertThat(invocations(TccOperation.CANCEL, empty)).isZero();
    assertThat(invocations(TccOperation.TRY, empty)).isOne();
    assertThat(runs(TccOperation.CANCEL, empty)).isZero();
    assertThat(runs(TccOperation.TRY, empty)).isZero();
  }

  @Test
  void theResultIsStoredWithTheRowInTheSameRoundTrip() throws Exception {
    String b = unique();
    committed(call(b, TccOperation.TRY));
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT origin, outcome, result FROM converge_tcc_barrier WHERE branch_id = ? AND operation = 'try'")) {
      ps.setString(1, b);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualTo("try");
        assertThat(rs.getString(2)).isEqualTo("RAN");
        assertThat(new String(rs.getBytes(3))).isEqualTo("try:" + b);
      }
    }
  }

  @Test
  void afterTheCallTheTransactionIsCommittedAndTheConnectionUsable() throws Exception {
    String b = unique();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThat(barrier.runAndCommit(c, call(b, TccOperation.TRY), body(call(b, TccOperation.TRY))).outcome())
          .isEqualTo(TccOutcome.RAN);
      assertThat(c.getAutoCommit()).isFalse();
      assertThat(c.unwrap(BaseConnection.class).getTransactionState()).isEqualTo(TransactionState.IDLE);
      c.commit(); // nothing to commit: the driver knows the transaction ended, it sends no COMMIT
      assertThat((Object) c.getWarnings()).as("no 'there is no transaction in progress'").isNull();
      assertThat(runs(TccOperation.TRY, b)).as("visible to another connection: committed").isOne();
      // the next statement opens a new transaction, which the connection's rollback undoes
      try (Statement s = c.createStatement()) {
        s.executeUpdate("INSERT INTO tcc_effect VALUES ('after', '" + b + "')");
      }
      c.rollback();
      // and a refused call leaves the connection as usable
      assertThat(barrier.runAndCommit(c, call(b, TccOperation.TRY), body(call(b, TccOperation.TRY))).outcome())
          .isEqualTo(TccOutcome.DUPLICATE);
      assertThat(c.getAutoCommit()).isFalse();
      assertThat(c.unwrap(BaseConnection.class).getTransactionState()).isEqualTo(TransactionState.IDLE);
      c.commit();
      assertThat((Object) c.getWarnings()).isNull();
    }
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM tcc_effect WHERE operation = 'after'")) {
      rs.next();
      assertThat(rs.getInt(1)).isZero();
    }
  }

  @Test
  void anAutocommitConnectionIsRejected() throws Exception {
    String b = unique();
    try (Connection c = ds.getConnection()) {
      assertThatThrownBy(() -> barrier.runAndCommit(c, call(b, TccOperation.TRY), body(call(b, TccOperation.TRY))))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("autocommit");
    }
    assertThat(invocations(TccOperation.TRY, b)).isZero();
  }

  /** A body that updates the branch's business row, then waits for {@code release} when it is given one. */
  private TccBody onAccount(TccCall call, CountDownLatch updated, CountDownLatch release) {
    TccBody counted = body(call);
    return c -> {
      try (PreparedStatement ps = c.prepareStatement("UPDATE tcc_account SET n = n + 1 WHERE branch_id = ?")) {
        ps.setString(1, call.branchId());
        assertThat(ps.executeUpdate()).isOne();
      }
      updated.countDown();
      if (release != null) {
        assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
      }
      return counted.run(c);
    };
  }

  /**
   * Two fast calls of one branch whose bodies update the same business row, really interleaved: the second starts
   * once the first's body holds the row, and the first goes on only once the second waits for it.
   */
  private TccResult[] fastRace(TccCall first, TccCall second) throws Exception {
    try (Connection setup = ds.getConnection(); Statement s = setup.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS tcc_account (branch_id text PRIMARY KEY, n int NOT NULL)");
      s.execute("INSERT INTO tcc_account VALUES ('" + first.branchId() + "', 0) ON CONFLICT DO NOTHING");
    }
    CountDownLatch firstUpdated = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try (Connection a = ds.getConnection(); Connection b = ds.getConnection()) {
      a.setAutoCommit(false);
      b.setAutoCommit(false);
      int pidB = pid(b);
      CompletableFuture<TccResult> r1 = CompletableFuture.supplyAsync(() -> call(a, first,
          onAccount(first, firstUpdated, release)), threads);
      assertThat(firstUpdated.await(10, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<TccResult> r2 = CompletableFuture.supplyAsync(() -> call(b, second,
          onAccount(second, new CountDownLatch(1), null)), threads);
      Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
          .until(() -> waitingOnLock(pidB));
      assertThat(r2).isNotDone();
      release.countDown();
      return new TccResult[]{r1.get(10, TimeUnit.SECONDS), r2.get(10, TimeUnit.SECONDS)};
    } finally {
      threads.shutdownNow();
    }
  }

  private TccResult call(Connection c, TccCall call, TccBody body) {
    try {
      return barrier.runAndCommit(c, call, body);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aCancelDuringAFastTrysBodyIsAnEmptyRollbackAndTheTryIsThenRefusedAsHanging() throws Exception {
    String b = unique();
    try (Connection setup = ds.getConnection(); Statement s = setup.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS tcc_account (branch_id text PRIMARY KEY, n int NOT NULL)");
      s.execute("INSERT INTO tcc_account VALUES ('" + b + "', 0)");
    }
    TccCall tryCall = call(b, TccOperation.TRY);
    CountDownLatch updated = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService threads = Executors.newSingleThreadExecutor();
    try (Connection a = ds.getConnection()) {
      a.setAutoCommit(false);
      CompletableFuture<TccResult> tried = CompletableFuture.supplyAsync(() -> call(a, tryCall,
          onAccount(tryCall, updated, release)), threads);
      assertThat(updated.await(10, TimeUnit.SECONDS)).isTrue();
      // the Try's body holds the account row, its barrier row not written yet: the Cancel finds no Try, at once
      assertThat(committed(call(b, TccOperation.CANCEL)).outcome()).isEqualTo(TccOutcome.EMPTY_ROLLBACK);
      release.countDown();
      assertThat(tried.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(TccOutcome.HANGING_REFUSED);
    } finally {
      threads.shutdownNow();
    }
    assertThat(runs(TccOperation.TRY, b)).isZero();
    assertThat(runs(TccOperation.CANCEL, b)).isZero();
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT n FROM tcc_account WHERE branch_id = '" + b + "'")) {
      rs.next();
      assertThat(rs.getInt(1)).as("the Try's body rolled back").isZero();
    }
  }

  /**
   * The Cancel sent while its Try is still in progress (the coordinator's Try timed out): the Try, on {@link
   * TccBarrier#run}, has its barrier row and a new business row (a freeze) written but not committed. The Cancel must
   * wait for the Try and release that freeze: on the fast path its body would run first, find nothing (the freeze is
   * not yet visible), and be answered RAN once the Try committed, the money frozen for ever.
   */
  @Test
  void aCancelWaitsForATryInProgressAndReleasesWhatItFroze() throws Exception {
    String b = unique();
    try (Connection setup = ds.getConnection(); Statement s = setup.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS tcc_freeze (branch_id text NOT NULL)");
    }
    TccCall tryCall = call(b, TccOperation.TRY);
    TccCall cancelCall = call(b, TccOperation.CANCEL);
    CountDownLatch frozen = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try (Connection a = ds.getConnection(); Connection c = ds.getConnection()) {
      a.setAutoCommit(false);
      c.setAutoCommit(false);
      int pidC = pid(c);
      CompletableFuture<TccResult> tried = CompletableFuture.supplyAsync(() -> {
        try {
          TccResult r = barrier.run(a, tryCall, conn -> {
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO tcc_freeze VALUES (?)")) {
              ps.setString(1, b);
              ps.executeUpdate();
            }
            frozen.countDown();
            assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
            return null;
          });
          a.commit();
          return r;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, threads);
      assertThat(frozen.await(10, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<TccResult> cancelled = CompletableFuture.supplyAsync(() -> call(c, cancelCall, conn -> {
        try (PreparedStatement ps = conn.prepareStatement("DELETE FROM tcc_freeze WHERE branch_id = ?")) {
          ps.setString(1, b);
          return Integer.toString(ps.executeUpdate()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
      }), threads);
      Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
          .until(() -> waitingOnLock(pidC) || cancelled.isDone());
      release.countDown();
      assertThat(tried.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(TccOutcome.RAN);
      TccResult r = cancelled.get(10, TimeUnit.SECONDS);
      assertThat(r.outcome()).isEqualTo(TccOutcome.RAN);
      assertThat(text(r)).as("the Cancel released the Try's freeze").isEqualTo("1");
    } finally {
      threads.shutdownNow();
    }
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM tcc_freeze WHERE branch_id = '" + b + "'")) {
      rs.next();
      assertThat(rs.getInt(1)).as("nothing left frozen").isZero();
    }
  }

  @Test
  void twoFastConfirmsSerializeOnTheirBusinessRowAndTheSecondGetsTheFirstsResult() throws Exception {
    String b = unique();
    committed(call(b, TccOperation.TRY));
    TccResult[] r = fastRace(call(b, TccOperation.CONFIRM), call(b, TccOperation.CONFIRM));
    assertThat(r[0].outcome()).isEqualTo(TccOutcome.RAN);
    assertThat(r[1].outcome()).isEqualTo(TccOutcome.DUPLICATE);
    assertThat(text(r[1])).isEqualTo("confirm:" + b);
    assertThat(runs(TccOperation.CONFIRM, b)).isOne();
    assertThat(invocations(TccOperation.CONFIRM, b)).isEqualTo(2);
  }
}
