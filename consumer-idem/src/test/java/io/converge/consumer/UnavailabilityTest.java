package io.converge.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.CommitOutcomeUnknownException;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.LateCommitFencedException;
import io.converge.core.TransactionTimedOutException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.junit.jupiter.api.Test;
import org.springframework.transaction.HeuristicCompletionException;
import org.springframework.transaction.TransactionSystemException;

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
    for (String state : new String[]{"08006", "08001", "53300", "57P01", "57014", "40001", "40P01", "55P03"}) {
      assertThat(Unavailability.isUnavailability(new RuntimeException(new SQLException("x", state)))).as(state)
          .isTrue();
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

  /** A commit whose outcome is unknown may have committed: never released, even with a connection failure inside. */
  @Test
  void aCommitWhoseOutcomeIsUnknownIsNotAnUnavailability() {
    SQLException broken = new SQLException("An I/O error occurred while sending to the backend.", "08006");
    Throwable converge = new CommitOutcomeUnknownException("Commit of a unit of work of group g failed", "m1", broken);
    Throwable jdbcCommit = new TransactionSystemException("JDBC commit failed", broken);
    Throwable heuristic = new HeuristicCompletionException(HeuristicCompletionException.STATE_MIXED, broken);
    for (Throwable unknown : new Throwable[]{converge, jdbcCommit, heuristic}) {
      assertThat(Unavailability.isCommitOutcomeUnknown(unknown)).as(unknown.toString()).isTrue();
      assertThat(Unavailability.isUnavailability(unknown)).as(unknown.toString()).isFalse();
      // wrapped (Spring MVC's ServletException), and wrapping an outage elsewhere in the chain
      Throwable wrapped = new IllegalStateException("Request processing failed", unknown);
      assertThat(Unavailability.isUnavailability(wrapped)).as("wrapped " + unknown).isFalse();
      assertThat(Unavailability.isUnavailability(new DatabaseUnavailableException("down", null, unknown)))
          .as("inside an outage " + unknown).isFalse();
    }
    assertThat(Unavailability.isCommitOutcomeUnknown(new DatabaseUnavailableException("down", null, broken))).isFalse();
    assertThat(Unavailability.isCommitOutcomeUnknown(null)).isFalse();
  }

  /**
   * A rollback that failed on a dead connection after the application's own failure (PostgreSQL crash-restarted during
   * the transaction): no commit was attempted, an outage. The same exception without an application exception (it
   * followed a failed commit) or about a commit keeps its unknown outcome.
   */
  @Test
  void aRollbackThatFailedOnADeadConnectionAfterTheApplicationsFailureIsAnOutage() {
    SQLException closed = new SQLException("This connection has been closed.", "08003");
    TransactionSystemException rollback = new TransactionSystemException("JDBC rollback failed", closed);
    rollback.initApplicationException(new RuntimeException(new SQLException("I/O error", "08006")));
    assertThat(Unavailability.isUnavailability(new RuntimeException(rollback))).isTrue();
    assertThat(Unavailability.isCommitOutcomeUnknown(rollback)).isFalse();
    // Hibernate's wording, its connection error only as a suppressed exception of the cause
    RuntimeException hibernate = new RuntimeException("Unable to rollback against JDBC Connection");
    hibernate.addSuppressed(new SQLException("Connection is closed", "08003"));
    TransactionSystemException jpa = new TransactionSystemException("Could not roll back JPA transaction", hibernate);
    jpa.initApplicationException(new IllegalStateException("the handler failed"));
    assertThat(Unavailability.isUnavailability(jpa)).isTrue();

    TransactionSystemException afterCommit = new TransactionSystemException("JDBC rollback failed", closed);
    assertThat(Unavailability.isUnavailability(afterCommit)).as("no application exception: after a commit").isFalse();
    TransactionSystemException commit = new TransactionSystemException("JDBC commit failed", closed);
    commit.initApplicationException(new IllegalStateException("x"));
    assertThat(Unavailability.isUnavailability(commit)).isFalse();
    TransactionSystemException alive = new TransactionSystemException("JDBC rollback failed",
        new SQLException("duplicate key", "23505"));
    alive.initApplicationException(new IllegalStateException("x"));
    assertThat(Unavailability.isUnavailability(alive)).as("the connection is not lost").isFalse();
  }

  /**
   * The chaos soak's PostgreSQL crash restarts under Hibernate (JpaTransactionManager, HikariCP), with the exception
   * chains the services logged. A failed commit: Spring translates Hibernate's "Unable to commit against JDBC
   * Connection" into a DataAccessResourceFailureException that looks like any outage: its outcome is unknown. A failed
   * rollback after the application's failure: a JpaSystemException over Hibernate's TransactionException over
   * HikariCP's "Connection is closed" (no SQLState): an outage, nothing committed. The same rollback run by Spring
   * after a failed commit keeps the commit's unknown outcome; a JpaSystemException of anything else is not an outage.
   */
  @Test
  void hibernatesFailedCommitIsUnknownAndItsFailedRollbackOnADeadConnectionIsAnOutage() {
    SQLException io = new SQLException("An I/O error occurred while sending to the backend.", "08006");
    Throwable commit = new org.springframework.dao.DataAccessResourceFailureException(
        "Hibernate transaction: Unable to commit against JDBC Connection; " + io.getMessage(), io);
    assertThat(Unavailability.isCommitOutcomeUnknown(commit)).isTrue();
    assertThat(Unavailability.isUnavailability(new IllegalStateException("Request processing failed", commit)))
        .isFalse();
    Throwable jpaCommit = new org.springframework.orm.jpa.JpaSystemException(
        new org.hibernate.TransactionException("Unable to commit against JDBC Connection", new SQLException("x")));
    assertThat(Unavailability.isUnavailability(jpaCommit)).isFalse();

    org.springframework.orm.jpa.JpaSystemException rollback = hibernateRollback(
        new SQLException("Connection is closed"));
    assertThat(Unavailability.isCommitOutcomeUnknown(rollback)).isFalse();
    assertThat(Unavailability.isUnavailability(new IllegalStateException("Request processing failed", rollback)))
        .isTrue();

    org.springframework.orm.jpa.JpaSystemException afterCommit = hibernateRollback(
        new SQLException("Connection is closed"));
    StackTraceElement[] frames = afterCommit.getStackTrace();
    StackTraceElement[] spring = java.util.Arrays.copyOf(frames, frames.length + 1);
    spring[frames.length] = new StackTraceElement("org.springframework.transaction.support."
        + "AbstractPlatformTransactionManager", "doRollbackOnCommitException", null, 1);
    afterCommit.setStackTrace(spring);
    assertThat(Unavailability.isCommitOutcomeUnknown(afterCommit)).as("a rollback after a failed commit").isTrue();
    assertThat(Unavailability.isUnavailability(afterCommit)).isFalse();

    assertThat(Unavailability.isUnavailability(hibernateRollback(new SQLException("duplicate key", "23505"))))
        .as("the connection is not lost").isFalse();
    assertThat(Unavailability.isUnavailability(new org.springframework.orm.jpa.JpaSystemException(
        new org.hibernate.HibernateException("Connection is closed")))).as("not a rollback").isFalse();
  }

  private static org.springframework.orm.jpa.JpaSystemException hibernateRollback(SQLException cause) {
    return new org.springframework.orm.jpa.JpaSystemException(
        new org.hibernate.TransactionException("Unable to rollback against JDBC Connection", cause));
  }

  @Test
  void aWatchSeesTheUnknownCommitsOfItsThreadOnly() throws Exception {
    CommitOutcome.reportUnknown(); // unwatched: nobody sees it
    assertThat(CommitOutcome.watched()).isFalse();
    try (CommitOutcome.Watch outer = CommitOutcome.watch()) {
      try (CommitOutcome.Watch inner = CommitOutcome.watch()) {
        Thread other = new Thread(CommitOutcome::reportUnknown);
        other.start();
        other.join();
        assertThat(inner.sawUnknownOutcome()).as("another thread's commit").isFalse();
        CommitOutcome.reportUnknown();
        assertThat(inner.sawUnknownOutcome()).isTrue();
      }
      assertThat(outer.sawUnknownOutcome()).as("the enclosing watch sees it too").isTrue();
      assertThat(CommitOutcome.watched()).isTrue();
    }
    assertThat(CommitOutcome.watched()).isFalse();
    try (CommitOutcome.Watch fresh = CommitOutcome.watch()) {
      assertThat(fresh.sawUnknownOutcome()).isFalse();
    }
  }

  @Test
  void aWatchSeesTheTxnProducersCommitsOfItsThreadUntilItIsClosed() throws Exception {
    try (CommitOutcome.Watch outer = CommitOutcome.watch()) {
      try (CommitOutcome.Watch inner = CommitOutcome.watch()) {
        Thread other = new Thread(io.converge.core.internal.Commits::committed);
        other.start();
        other.join();
        assertThat(inner.sawCommit()).as("another thread's commit").isFalse();
        io.converge.core.internal.Commits.committed(); // what DefaultTxnProducer calls after its COMMIT
        assertThat(inner.sawCommit()).isTrue();
        assertThat(inner.sawUnknownOutcome()).isFalse();
      }
      assertThat(outer.sawCommit()).as("the enclosing watch sees it too").isTrue();
    }
    assertThat(io.converge.core.internal.Commits.observe(null)).as("closing the watch removed its observer").isNull();
  }

  @Test
  void aConnectionLostBeforeTheDatabaseAnsweredIsToldFromAnAnswer() {
    assertThat(Unavailability.isConnectionLost(new RuntimeException("commit failed",
        new SQLException("An I/O error occurred while sending to the backend.", "08006")))).isTrue();
    assertThat(Unavailability.isConnectionLost(new SQLException("terminating connection", "57P01"))).isTrue();
    assertThat(Unavailability.isConnectionLost(new TransactionSystemException("JDBC commit failed",
        new SQLException("x", null, new java.net.SocketException("Connection reset"))))).isTrue();
    assertThat(Unavailability.isConnectionLost(new SQLException("Connection is closed"))).as("HikariCP").isTrue();
    assertThat(Unavailability.isConnectionLost(new SQLException("You can't operate on a closed Connection!!!")))
        .as("c3p0").isTrue();
    assertThat(Unavailability.isConnectionLost(new SQLException("Connection has already been closed.")))
        .as("Tomcat JDBC").isTrue();
    assertThat(Unavailability.isConnectionLost(new CommitOutcomeUnknownException("unknown", "m1", null))).isTrue();
    // the database answered the COMMIT: the work was rolled back
    assertThat(Unavailability.isConnectionLost(new RuntimeException("commit failed",
        new SQLException("duplicate key value violates unique constraint", "23505")))).isFalse();
    assertThat(Unavailability.isConnectionLost(new SQLException("could not serialize access", "40001"))).isFalse();
    assertThat(Unavailability.isConnectionLost(new SQLException("out of memory", "53200"))).isFalse();
    assertThat(Unavailability.isConnectionLost(null)).isFalse();
  }

  @Test
  void aWatchTellsWhetherTheCommitOfUnknownOutcomeWroteItsMarker() throws Exception {
    javax.sql.DataSource store = new org.postgresql.ds.PGSimpleDataSource();
    CommitOutcome.Marker marker = new CommitOutcome.Marker() {

      @Override
      public javax.sql.DataSource dataSource() {
        return store;
      }

      @Override
      public void mark(java.sql.Connection transaction) {
      }
    };
    try (CommitOutcome.Watch watch = CommitOutcome.watch(marker)) {
      CommitOutcome.marker().mark(null); // a transaction manager wrote it before a COMMIT that failed
      CommitOutcome.reportUnknown();
      assertThat(watch.unknownOutcomeMarked()).isTrue();
    }
    try (CommitOutcome.Watch watch = CommitOutcome.watch(marker)) {
      CommitOutcome.marker().mark(null);
      CommitOutcome.reportCommitted(); // that transaction committed; the next one wrote no marker
      CommitOutcome.reportUnknown();
      assertThat(watch.unknownOutcomeMarked()).isFalse();
    }
    try (CommitOutcome.Watch watch = CommitOutcome.watch(marker)) {
      // a TxnProducer unit on the marker's data source: marked, then its commit failed (no outcome reported)
      io.converge.core.internal.Commits.beforeCommit(store, null);
      assertThat(watch.unknownOutcomeMarked()).isTrue();
    }
    try (CommitOutcome.Watch watch = CommitOutcome.watch(marker)) {
      io.converge.core.internal.Commits.beforeCommit(new org.postgresql.ds.PGSimpleDataSource(), null);
      assertThat(watch.unknownOutcomeMarked()).as("a unit on another data source writes no marker").isFalse();
      assertThat(watch.sawUnknownOutcome()).isFalse();
    }
  }
}
