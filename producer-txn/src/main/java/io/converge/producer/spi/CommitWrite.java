package io.converge.producer.spi;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * The last log writes of a unit of work, which must precede its database commit and may travel with
 * it: {@code TxnProducer.inTransaction}, which owns the commit, sends them and the {@code COMMIT} in one
 * round trip ({@link #writeAndCommit}); a joined transaction, whose owner commits, writes them alone
 * ({@link #write}). Either way the unit commits only if every write succeeded. Used by the unit's thread.
 */
public interface CommitWrite {

  /**
   * Writes, inside the open transaction on {@code connection}; the caller commits.
   *
   * @throws io.converge.core.LateCommitFencedException when a check-back fenced a message first
   * @throws SQLException on any other database error
   */
  void write(Connection connection) throws SQLException;

  /**
   * Writes and commits on {@code connection}, in one round trip where the driver allows it (else a write,
   * then {@code commit()}).
   *
   * @throws io.converge.core.LateCommitFencedException when a check-back fenced a message first:
   *     nothing was committed, the caller rolls back
   * @throws SQLException the server's error; the caller decides from its SQLSTATE: a refusal of the whole
   *     transaction (classes 22, 23, 25, 40, 42, 44) committed nothing and is rolled back; any other error
   *     (a connection failure 08, a shutdown 57P, a PANIC, none) may have come after the COMMIT ran: the
   *     outcome is unknown
   */
  void writeAndCommit(Connection connection) throws SQLException;
}
