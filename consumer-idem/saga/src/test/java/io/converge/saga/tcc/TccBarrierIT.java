package io.converge.saga.tcc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.Migrations;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link TccBarrier} on the real (shared, embedded) PostgreSQL: each outcome, duplicates, the empty rollback and the
 * hanging Try, and the races of two connections, made to really interleave: the second call is started only once
 * the first holds its row, and the first commits only once PostgreSQL shows the second waiting on a lock.
 *
 * <p>Each call runs as {@link #fast()} says: here {@link TccBarrier#run} in the test's transaction, then a commit;
 * in {@link TccBarrierCommitIT}, which runs every test of this class again, {@link TccBarrier#runAndCommit}. A body's
 * run is counted by the row it writes in the call's transaction ({@code tcc_effect}): committed runs only, so a body
 * that ran and was rolled back (the fast path's refused calls) does not count. In the races the first call holds its
 * transaction open through {@link TccBarrier#run} (on the fast path, another instance on the slow path) and the second
 * makes the call under test.
 */
class TccBarrierIT {

  static DataSource ds;

  final Counting metrics = new Counting();
  final TccBarrier barrier = TccBarrier.builder().metrics(metrics).build();
  /** Invocations of the bodies, per "operation/branch", committed or not. */
  final ConcurrentHashMap<String, AtomicInteger> invocations = new ConcurrentHashMap<>();

  @BeforeAll
  static void schema() throws Exception {
    ds = ConvergePostgres.shared().newSchema("tccbarrier");
    Migrations.apply(ds, "tcc");
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE tcc_effect (operation text NOT NULL, branch_id text NOT NULL)");
    }
  }

  /** True to make each call through {@link TccBarrier#runAndCommit}. */
  boolean fast() {
    return false;
  }

  /** {@code call} on {@code c} as {@link #fast()} says, committed when it returns. */
  TccResult callAndCommit(Connection c, TccCall call, TccBody body) throws Exception {
    if (fast()) {
      return barrier.runAndCommit(c, call, body);
    }
    TccResult r = barrier.run(c, call, body);
    c.commit();
    return r;
  }

  static final class Counting implements TccMetrics {

    final AtomicInteger hanging = new AtomicInteger();
    final ConcurrentHashMap<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    @Override
    public void called(TccOperation operation, TccOutcome outcome) {
      calls.computeIfAbsent(operation.wireName() + ":" + outcome, k -> new AtomicInteger()).incrementAndGet();
    }

    @Override
    public void hanging(String tenant) {
      hanging.incrementAndGet();
    }
  }

  static TccCall call(String branch, TccOperation op) {
    return new TccCall("t1", "g-" + branch, branch, op);
  }

  static String unique() {
    return UUID.randomUUID().toString().substring(0, 8);
  }

  /** A body that writes its run in its transaction, counts its invocations and returns "op:branch". */
  TccBody body(TccCall call) {
    return c -> {
      invocations.computeIfAbsent(call.operation().wireName() + "/" + call.branchId(), k -> new AtomicInteger())
          .incrementAndGet();
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO tcc_effect (operation, branch_id) VALUES (?, ?)")) {
        ps.setString(1, call.operation().wireName());
        ps.setString(2, call.branchId());
        ps.executeUpdate();
      }
      return (call.operation().wireName() + ":" + call.branchId()).getBytes(StandardCharsets.UTF_8);
    };
  }

  /** The committed runs of {@code op}'s body for {@code branch}. */
  static int runs(TccOperation op, String branch) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT count(*) FROM tcc_effect WHERE operation = ? AND branch_id = ?")) {
      ps.setString(1, op.wireName());
      ps.setString(2, branch);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** The invocations of {@code op}'s body for {@code branch}, committed or rolled back. */
  int invocations(TccOperation op, String branch) {
    AtomicInteger n = invocations.get(op.wireName() + "/" + branch);
    return n == null ? 0 : n.get();
  }

  /** One call in a transaction of its own, committed. */
  TccResult committed(TccCall call) throws Exception {
    return committed(call, body(call));
  }

  TccResult committed(TccCall call, TccBody body) throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      return callAndCommit(c, call, body);
    }
  }

  static String text(TccResult r) {
    return new String(r.result(), StandardCharsets.UTF_8);
  }

  @Test
  void tryThenConfirmRunEachOnceAndDuplicatesGetTheStoredResult() throws Exception {
    String b = unique();
    TccResult tried = committed(call(b, TccOperation.TRY));
    assertThat(tried.outcome()).isEqualTo(TccOutcome.RAN);
    assertThat(text(tried)).isEqualTo("try:" + b);
    TccResult again = committed(call(b, TccOperation.TRY));
    assertThat(again.outcome()).isEqualTo(TccOutcome.DUPLICATE);
    assertThat(text(again)).isEqualTo("try:" + b);

    assertThat(committed(call(b, TccOperation.CONFIRM)).outcome()).isEqualTo(TccOutcome.RAN);
    TccResult confirmedAgain = committed(call(b, TccOperation.CONFIRM));
    assertThat(confirmedAgain.outcome()).isEqualTo(TccOutcome.DUPLICATE);
    assertThat(text(confirmedAgain)).isEqualTo("confirm:" + b);
    assertThat(runs(TccOperation.TRY, b)).isOne();
    assertThat(runs(TccOperation.CONFIRM, b)).isOne();
    assertThat(metrics.calls.get("try:DUPLICATE").get()).isPositive();
  }

  @Test
  void tryThenCancelRunsTheCancelBodyOnceAndADuplicateCancelGetsItsResult() throws Exception {
    String b = unique();
    committed(call(b, TccOperation.TRY));
    TccResult cancelled = committed(call(b, TccOperation.CANCEL));
    assertThat(cancelled.outcome()).isEqualTo(TccOutcome.RAN);
    TccResult again = committed(call(b, TccOperation.CANCEL));
    assertThat(again.outcome()).isEqualTo(TccOutcome.DUPLICATE);
    assertThat(text(again)).isEqualTo("cancel:" + b);
    assertThat(runs(TccOperation.CANCEL, b)).isOne();
  }

  @Test
  void aCancelBeforeItsTryIsAnEmptyRollbackAndTheLateTryIsRefusedCountedAndListed() throws Exception {
    String b = unique();
    TccResult cancelled = committed(call(b, TccOperation.CANCEL));
    assertThat(cancelled.outcome()).isEqualTo(TccOutcome.EMPTY_ROLLBACK);
    assertThat(cancelled.result()).isEmpty();
    assertThat(committed(call(b, TccOperation.CANCEL)).outcome()).isEqualTo(TccOutcome.DUPLICATE);
    assertThat(runs(TccOperation.CANCEL, b)).isZero();

    assertThat(committed(call(b, TccOperation.TRY)).outcome()).isEqualTo(TccOutcome.HANGING_REFUSED);
    assertThat(committed(call(b, TccOperation.TRY)).outcome()).isEqualTo(TccOutcome.HANGING_REFUSED);
    assertThat(runs(TccOperation.TRY, b)).isZero();
    assertThat(metrics.hanging.get()).isEqualTo(2);

    TccBarrierOps.HangingBranch listed = TccBarrierOps.of(ds).hangingRefused(1000).stream()
        .filter(h -> h.branchId().equals(b)).findFirst().orElseThrow();
    assertThat(listed.globalId()).isEqualTo("g-" + b);
    assertThat(listed.tenant()).isEqualTo("t1");
    assertThat(listed.refusals()).isEqualTo(2);
    assertThat(TccBarrierOps.of(ds).countHangingRefused()).isPositive();

    // a Confirm of a branch refused as hanging is an error, never a success, and leaves nothing behind
    assertThatThrownBy(() -> committed(call(b, TccOperation.CONFIRM)))
        .isInstanceOf(ConfirmWithoutTryException.class).hasMessageContaining("refused as hanging");
  }

  @Test
  void aConfirmWithoutItsTryIsATypedError() throws Exception {
    String b = unique();
    assertThatThrownBy(() -> committed(call(b, TccOperation.CONFIRM)))
        .isInstanceOf(ConfirmWithoutTryException.class).hasMessageContaining("no Try row")
        .satisfies(e -> assertThat(((ConfirmWithoutTryException) e).call().branchId()).isEqualTo(b));
    assertThat(runs(TccOperation.CONFIRM, b)).isZero();
  }

  @Test
  void aTryBodyThatThrowsLeavesNothingSoItsCancelIsEmpty() throws Exception {
    String b = unique();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> callAndCommit(c, call(b, TccOperation.TRY), x -> {
        throw new IllegalStateException("no funds");
      })).isInstanceOf(IllegalStateException.class).hasMessage("no funds");
      c.rollback();
    }
    assertThat(committed(call(b, TccOperation.CANCEL)).outcome()).isEqualTo(TccOutcome.EMPTY_ROLLBACK);
  }

  /** Holds {@code first} open on a connection of its own until {@code second}, on another, waits for its row. */
  private record Race(TccResult first, TccResult second) {
  }

  private Race race(TccCall first, TccCall second, boolean commitFirst) throws Exception {
    CountDownLatch firstInserted = new CountDownLatch(1);
    try (Connection a = ds.getConnection(); Connection b = ds.getConnection()) {
      a.setAutoCommit(false);
      b.setAutoCommit(false);
      int pidB = pid(b);
      TccBody firstBody = body(first);
      TccResult r1 = barrier.run(a, first, c -> {
        firstInserted.countDown();
        return firstBody.run(c);
      });
      firstInserted.countDown(); // an empty rollback runs no body
      CompletableFuture<TccResult> r2 = CompletableFuture.supplyAsync(() -> {
        try {
          return callAndCommit(b, second, body(second));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      // the second call really waits for the first's row before the first ends
      Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
          .until(() -> waitingOnLock(pidB));
      assertThat(r2).isNotDone();
      if (commitFirst) {
        a.commit();
      } else {
        a.rollback();
      }
      return new Race(r1, r2.get(10, TimeUnit.SECONDS));
    }
  }

  static int pid(Connection c) throws Exception {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  static boolean waitingOnLock(int pid) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT wait_event_type FROM pg_stat_activity WHERE pid = ?")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && "Lock".equals(rs.getString(1));
      }
    }
  }

  @Test
  void aTryAndItsCancelRacingTryFirstBothRunOnce() throws Exception {
    String b = unique();
    Race r = race(call(b, TccOperation.TRY), call(b, TccOperation.CANCEL), true);
    assertThat(r.first().outcome()).isEqualTo(TccOutcome.RAN);
    assertThat(r.second().outcome()).isEqualTo(TccOutcome.RAN); // the cancel released what the Try froze
    assertThat(runs(TccOperation.TRY, b)).isOne();
    assertThat(runs(TccOperation.CANCEL, b)).isOne();
  }

  @Test
  void aTryAndItsCancelRacingCancelFirstTheTryIsRefused() throws Exception {
    String b = unique();
    Race r = race(call(b, TccOperation.CANCEL), call(b, TccOperation.TRY), true);
    assertThat(r.first().outcome()).isEqualTo(TccOutcome.EMPTY_ROLLBACK);
    assertThat(r.second().outcome()).isEqualTo(TccOutcome.HANGING_REFUSED);
    assertThat(runs(TccOperation.TRY, b)).isZero();
    assertThat(runs(TccOperation.CANCEL, b)).isZero();
  }

  @Test
  void aTryRolledBackWhileItsCancelWaitsLeavesAnEmptyRollback() throws Exception {
    String b = unique();
    Race r = race(call(b, TccOperation.TRY), call(b, TccOperation.CANCEL), false);
    assertThat(r.second().outcome()).isEqualTo(TccOutcome.EMPTY_ROLLBACK);
    assertThat(runs(TccOperation.CANCEL, b)).isZero();
    assertThat(committed(call(b, TccOperation.TRY)).outcome()).isEqualTo(TccOutcome.HANGING_REFUSED);
  }

  @Test
  void twoConfirmsRacingRunTheBodyOnceAndTheSecondGetsTheFirstsResult() throws Exception {
    String b = unique();
    committed(call(b, TccOperation.TRY));
    Race r = race(call(b, TccOperation.CONFIRM), call(b, TccOperation.CONFIRM), true);
    assertThat(r.first().outcome()).isEqualTo(TccOutcome.RAN);
    assertThat(r.second().outcome()).isEqualTo(TccOutcome.DUPLICATE);
    assertThat(text(r.second())).isEqualTo("confirm:" + b);
    assertThat(runs(TccOperation.CONFIRM, b)).isOne();
  }

  @Test
  void twoTriesOrTwoCancelsRacingTakeEffectOnce() throws Exception {
    String t = unique();
    Race tries = race(call(t, TccOperation.TRY), call(t, TccOperation.TRY), true);
    assertThat(tries.first().outcome()).isEqualTo(TccOutcome.RAN);
    assertThat(tries.second().outcome()).isEqualTo(TccOutcome.DUPLICATE);
    assertThat(runs(TccOperation.TRY, t)).isOne();

    String c = unique();
    committed(call(c, TccOperation.TRY));
    Race cancels = race(call(c, TccOperation.CANCEL), call(c, TccOperation.CANCEL), true);
    assertThat(cancels.first().outcome()).isEqualTo(TccOutcome.RAN);
    assertThat(cancels.second().outcome()).isEqualTo(TccOutcome.DUPLICATE);
    assertThat(text(cancels.second())).isEqualTo("cancel:" + c);
    assertThat(runs(TccOperation.CANCEL, c)).isOne();
  }

  @Test
  void thePurgeDeletesOnlyRowsOlderThanTheRetention() throws Exception {
    String young = unique();
    String old = unique();
    committed(call(young, TccOperation.CANCEL));
    committed(call(old, TccOperation.CANCEL));
    Duration retention = Duration.ofHours(7);
    age(young, retention.minusMinutes(1));
    age(old, retention.plusMinutes(1));
    TccBarrierPurger purger = new TccBarrierPurger(ds, TccRetention.of(retention), 1);
    assertThat(purger.countExpired()).isEqualTo(2); // the old branch's try and cancel rows
    assertThat(purger.purgeExpired(100)).isEqualTo(2);
    // the young branch's rows still fence its late Try
    assertThat(committed(call(young, TccOperation.TRY)).outcome()).isEqualTo(TccOutcome.HANGING_REFUSED);
    assertThat(committed(call(old, TccOperation.TRY)).outcome()).isEqualTo(TccOutcome.RAN);
  }

  private static void age(String branch, Duration by) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "UPDATE converge_tcc_barrier SET created_at = now() - make_interval(secs => ?) WHERE branch_id = ?")) {
      ps.setDouble(1, by.toSeconds());
      ps.setString(2, branch);
      assertThat(ps.executeUpdate()).isEqualTo(2);
    }
  }

  /** Sets the created_at of every row of {@code branch} {@code by} in the past. */
  private static void ageAll(String branch, Duration by) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "UPDATE converge_tcc_barrier SET created_at = now() - make_interval(secs => ?) WHERE branch_id = ?")) {
      ps.setDouble(1, by.toSeconds());
      ps.setString(2, branch);
      assertThat(ps.executeUpdate()).isPositive();
    }
  }

  private static int rows(String branch) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM converge_tcc_barrier WHERE branch_id = ?")) {
      ps.setString(1, branch);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  @Test
  void thePurgeDeletesOldFinishedBranchesOnlySoALateCancelOrConfirmOfAnOldTryStillFindsIt() throws Exception {
    String finished = unique();
    String toCancel = unique();
    String toConfirm = unique();
    committed(call(finished, TccOperation.TRY));
    committed(call(finished, TccOperation.CONFIRM));
    committed(call(toCancel, TccOperation.TRY));
    committed(call(toConfirm, TccOperation.TRY));
    Duration eightDays = Duration.ofDays(8);
    ageAll(finished, eightDays);
    ageAll(toCancel, eightDays);
    ageAll(toConfirm, eightDays);

    TccBarrierPurger purger = new TccBarrierPurger(ds, TccRetention.defaults(), 1);
    assertThat(purger.countExpired()).isGreaterThanOrEqualTo(2);
    assertThat(purger.purgeExpired(100)).isGreaterThanOrEqualTo(2);
    assertThat(rows(finished)).as("the old finished branch is purged").isZero();
    assertThat(rows(toCancel)).as("an old unfinished Try is kept").isOne();
    assertThat(rows(toConfirm)).isOne();
    // ops sees them
    TccBarrierOps ops = TccBarrierOps.of(ds);
    assertThat(ops.unfinished(Duration.ofDays(7), 10_000)).extracting(TccBarrierOps.UnfinishedBranch::branchId)
        .contains(toCancel, toConfirm).doesNotContain(finished);
    assertThat(ops.countUnfinished(Duration.ofDays(7))).isGreaterThanOrEqualTo(2);
    assertThat(ops.unfinished(Duration.ofDays(9), 10_000)).extracting(TccBarrierOps.UnfinishedBranch::branchId)
        .doesNotContain(toCancel);

    // the Cancel asked on day 8 releases what the Try froze; the Confirm consumes it
    assertThat(committed(call(toCancel, TccOperation.CANCEL)).outcome()).isEqualTo(TccOutcome.RAN);
    assertThat(runs(TccOperation.CANCEL, toCancel)).isOne();
    assertThat(committed(call(toConfirm, TccOperation.CONFIRM)).outcome()).isEqualTo(TccOutcome.RAN);
    assertThat(runs(TccOperation.CONFIRM, toConfirm)).isOne();
    assertThat(committed(call(toCancel, TccOperation.TRY)).outcome()).isEqualTo(TccOutcome.DUPLICATE);
    assertThat(runs(TccOperation.TRY, toCancel)).isOne();
  }

  @Test
  void aCancelAfterTheConfirmAndAConfirmAfterTheCancelAreRefusedAndRunNothing() throws Exception {
    String confirmed = unique();
    committed(call(confirmed, TccOperation.TRY));
    committed(call(confirmed, TccOperation.CONFIRM));
    for (int i = 0; i < 2; i++) { // nothing stored: refused again
      assertThatThrownBy(() -> committed(call(confirmed, TccOperation.CANCEL)))
          .isInstanceOf(CancelAfterConfirmException.class).isInstanceOf(TccBarrierException.class);
    }
    assertThat(runs(TccOperation.CANCEL, confirmed)).isZero();
    assertThat(committed(call(confirmed, TccOperation.CONFIRM)).outcome()).isEqualTo(TccOutcome.DUPLICATE);

    String cancelled = unique();
    committed(call(cancelled, TccOperation.TRY));
    committed(call(cancelled, TccOperation.CANCEL));
    assertThatThrownBy(() -> committed(call(cancelled, TccOperation.CONFIRM)))
        .isInstanceOf(ConfirmAfterCancelException.class);
    assertThat(runs(TccOperation.CONFIRM, cancelled)).isZero();
    assertThat(committed(call(cancelled, TccOperation.CANCEL)).outcome()).isEqualTo(TccOutcome.DUPLICATE);
  }

  /** As {@link #race}, the second call expected to fail: its exception, its transaction rolled back. */
  private Throwable raceRefused(TccCall first, TccCall second) throws Exception {
    return raceRefused(first, second, Connection.TRANSACTION_READ_COMMITTED, Connection.TRANSACTION_READ_COMMITTED);
  }

  /**
   * {@link #raceRefused(TccCall, TccCall)} with the first call's transaction in {@code firstIsolation}, the second's
   * in {@code isolation}; the second's snapshot is taken before the first commits (its first statement runs before
   * the first call).
   */
  private Throwable raceRefused(TccCall first, TccCall second, int firstIsolation, int isolation) throws Exception {
    try (Connection a = ds.getConnection(); Connection b = ds.getConnection()) {
      a.setAutoCommit(false);
      b.setAutoCommit(false);
      a.setTransactionIsolation(firstIsolation);
      b.setTransactionIsolation(isolation);
      int pidB = pid(b);
      barrier.run(a, first, body(first));
      CompletableFuture<Throwable> r2 = CompletableFuture.supplyAsync(() -> {
        try {
          callAndCommit(b, second, body(second));
          return null;
        } catch (Exception e) {
          try {
            b.rollback();
          } catch (Exception ignored) {
            e.addSuppressed(ignored);
          }
          return e;
        }
      });
      // a barrier that refuses the isolation level may answer before it waits
      Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
          .until(() -> waitingOnLock(pidB) || isolation != Connection.TRANSACTION_READ_COMMITTED && r2.isDone());
      if (isolation == Connection.TRANSACTION_READ_COMMITTED) {
        assertThat(r2).isNotDone();
      }
      a.commit();
      return r2.get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aConfirmAndACancelRacingNeverBothRun() throws Exception {
    String b1 = unique();
    committed(call(b1, TccOperation.TRY));
    assertThat(raceRefused(call(b1, TccOperation.CONFIRM), call(b1, TccOperation.CANCEL)))
        .isInstanceOf(CancelAfterConfirmException.class);
    assertThat(runs(TccOperation.CONFIRM, b1)).isOne();
    assertThat(runs(TccOperation.CANCEL, b1)).isZero();

    String b2 = unique();
    committed(call(b2, TccOperation.TRY));
    assertThat(raceRefused(call(b2, TccOperation.CANCEL), call(b2, TccOperation.CONFIRM)))
        .isInstanceOf(ConfirmAfterCancelException.class);
    assertThat(runs(TccOperation.CANCEL, b2)).isOne();
    assertThat(runs(TccOperation.CONFIRM, b2)).isZero();
  }

  /**
   * In REPEATABLE READ the second of a Confirm and a Cancel racing got the try row's lock without an error once the
   * first committed (the first only locked it) and then looked for the first's row with its old snapshot: it did not
   * see it, and both bodies committed (money debited and released). The barrier refuses a Confirm or a Cancel in
   * REPEATABLE READ ({@link TccIsolationException}, on the fast path through the function's refusal, V6) before its
   * body commits. The first call here runs in READ COMMITTED, the second (whose snapshot is taken before the first
   * commits) in REPEATABLE READ. In SERIALIZABLE the race is a serialization failure: one body runs.
   */
  @Test
  void aConfirmOrACancelInRepeatableReadIsRefusedSoARacingPairNeverBothRun() throws Exception {
    for (TccOperation first : List.of(TccOperation.CONFIRM, TccOperation.CANCEL)) {
      TccOperation second = first == TccOperation.CONFIRM ? TccOperation.CANCEL : TccOperation.CONFIRM;
      String b = unique();
      committed(call(b, TccOperation.TRY));
      Throwable refused = raceRefused(call(b, first), call(b, second), Connection.TRANSACTION_READ_COMMITTED,
          Connection.TRANSACTION_REPEATABLE_READ);
      assertThat(runs(first, b)).as("%s first", first).isOne();
      assertThat(runs(second, b)).as("%s second, in REPEATABLE READ (%s)", second, refused).isZero();
      assertThat(refused).isInstanceOf(TccIsolationException.class).hasMessageContaining("REPEATABLE READ");
    }

    String alone = unique();
    committed(call(alone, TccOperation.TRY));
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      assertThatThrownBy(() -> callAndCommit(c, call(alone, TccOperation.CONFIRM), body(call(alone,
          TccOperation.CONFIRM)))).isInstanceOf(TccIsolationException.class);
      c.rollback();
    }
    assertThat(runs(TccOperation.CONFIRM, alone)).isZero();

    String serializable = unique();
    committed(call(serializable, TccOperation.TRY));
    Throwable failed = raceRefused(call(serializable, TccOperation.CONFIRM), call(serializable, TccOperation.CANCEL),
        Connection.TRANSACTION_SERIALIZABLE, Connection.TRANSACTION_SERIALIZABLE);
    assertThat(failed).isNotNull();
    assertThat(runs(TccOperation.CONFIRM, serializable)).isOne();
    assertThat(runs(TccOperation.CANCEL, serializable)).isZero();
  }

  /**
   * Migration V4: four indexes where there were six (each barrier insert maintained up to four), every reader still
   * served: the primary key leads with global_id for converge trace, a partial index lists the Tries that ran.
   */
  @Test
  void theBarrierKeepsFourIndexesAndTheTraceFindsRowsByGlobalIdThroughThePrimaryKey() throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      List<String> indexes = new java.util.ArrayList<>();
      try (ResultSet rs = s.executeQuery("SELECT indexname, indexdef FROM pg_indexes"
          + " WHERE tablename = 'converge_tcc_barrier' AND schemaname = current_schema() ORDER BY indexname")) {
        while (rs.next()) {
          indexes.add(rs.getString(1));
          if (rs.getString(1).equals("converge_tcc_barrier_pkey")) {
            assertThat(rs.getString(2)).endsWith("(global_id, tenant, branch_id, operation)");
          }
        }
      }
      assertThat(indexes).containsExactly("converge_tcc_barrier_finished", "converge_tcc_barrier_pkey",
          "converge_tcc_barrier_refused", "converge_tcc_barrier_tried");
      s.execute("SET enable_seqscan = off");
      StringBuilder plan = new StringBuilder();
      try (ResultSet rs = s.executeQuery(
          "EXPLAIN SELECT created_at FROM converge_tcc_barrier WHERE global_id = ANY('{g-a,g-b}'::text[])")) {
        while (rs.next()) {
          plan.append(rs.getString(1)).append('\n');
        }
      }
      s.execute("RESET enable_seqscan");
      assertThat(plan.toString()).contains("converge_tcc_barrier_pkey").contains("global_id = ANY");
    }
  }

  /**
   * Migration V5: an insert evaluates no CHECK constraint (PostgreSQL rebuilds them from text on every execution)
   * and the unique key compares bytewise; the key's lookups still go through the primary key.
   */
  @Test
  void theBarrierInsertsCheckNoConstraintAndCompareTheirKeyBytewise() throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_constraint"
          + " WHERE conrelid = 'converge_tcc_barrier'::regclass AND contype = 'c'")) {
        rs.next();
        assertThat(rs.getInt(1)).isZero();
      }
      List<String> bytewise = new java.util.ArrayList<>();
      try (ResultSet rs = s.executeQuery("SELECT a.attname FROM pg_attribute a JOIN pg_collation l"
          + " ON l.oid = a.attcollation WHERE a.attrelid = 'converge_tcc_barrier'::regclass AND l.collname = 'C'"
          + " ORDER BY a.attname")) {
        while (rs.next()) {
          bytewise.add(rs.getString(1));
        }
      }
      assertThat(bytewise).containsExactly("branch_id", "global_id", "operation", "tenant");
      s.execute("SET enable_seqscan = off");
      StringBuilder plan = new StringBuilder();
      try (PreparedStatement ps = c.prepareStatement("EXPLAIN SELECT origin FROM converge_tcc_barrier"
          + " WHERE tenant = ? AND global_id = ? AND branch_id = ? AND operation = 'try' FOR UPDATE")) {
        ps.setString(1, "t");
        ps.setString(2, "g");
        ps.setString(3, "b");
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            plan.append(rs.getString(1)).append('\n');
          }
        }
      }
      s.execute("RESET enable_seqscan");
      assertThat(plan.toString()).contains("Index Scan using converge_tcc_barrier_pkey");
    }
  }

  @Test
  void tenantsAreIsolated() throws Exception {
    String b = unique();
    committed(call(b, TccOperation.CANCEL));
    TccCall other = new TccCall("t2", "g-" + b, b, TccOperation.TRY);
    assertThat(committed(other, body(other)).outcome()).isEqualTo(TccOutcome.RAN);
    assertThat(List.of(TccOutcome.values())).hasSize(4);
  }
}
