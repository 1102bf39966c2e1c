-- Cheaper barrier inserts (issue 33's bench: a branch inserts two rows, and their cost is most of the barrier's).
-- Measured with callgrind on PostgreSQL 17 (instructions per branch, prepared statements: docs/benchmarks.md).
--
-- 1. The two CHECK constraints go (the values of operation and origin). PostgreSQL rebuilds a table's CHECK
--    expressions from their stored text in every statement that inserts into it (ExecRelCheck, stringToNode of
--    pg_constraint.conbin, once per execution, prepared or not): about half of the executor's work for an insert
--    here. The barrier is the only writer of these columns and writes them from constants (DefaultTccBarrier,
--    converge_tcc_barrier_commit); their values are documented on the columns.
-- 2. The unique key's text columns compare bytewise (COLLATE "C"): the key is an identifier, never sorted for a
--    person, and its equality is the same under every deterministic collation; a linguistic collation made each
--    comparison of the primary key's descent (the conflict check, then the insert) a strcoll call.
ALTER TABLE converge_tcc_barrier
  DROP CONSTRAINT converge_tcc_barrier_operation,
  DROP CONSTRAINT converge_tcc_barrier_origin,
  ALTER COLUMN global_id TYPE text COLLATE "C",
  ALTER COLUMN tenant TYPE text COLLATE "C",
  ALTER COLUMN branch_id TYPE text COLLATE "C",
  ALTER COLUMN operation TYPE text COLLATE "C";
COMMENT ON COLUMN converge_tcc_barrier.operation IS 'try | confirm | cancel (written by the barrier only)';
COMMENT ON COLUMN converge_tcc_barrier.origin IS 'try | cancel-first | confirm | cancel (written by the barrier only)';
