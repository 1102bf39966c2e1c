-- The TCC branch barrier of a participant (module converge-saga, issue 33; io.converge.saga.tcc.TccBarrier).
--
-- One row per (tenant, global transaction, branch, operation) that took effect in the participant's database,
-- written in the participant's own transaction, next to its business writes. Only INSERT ... ON CONFLICT DO
-- NOTHING, then reads or updates of rows that exist: never a locking read of a missing row (the pattern that
-- deadlocks under gap locks). The unique key makes a second inserter of the same row wait for the first's commit.
--
-- A Cancel first inserts the TRY row with origin 'cancel-first': when that insert takes effect the Try never ran
-- (an empty rollback), and a Try that arrives later finds its row taken and is refused as hanging (refusals counts
-- them, refused_at is the last one: the rows an operator looks at).
CREATE TABLE converge_tcc_barrier (
  tenant      text        NOT NULL,
  global_id   text        NOT NULL,
  branch_id   text        NOT NULL,
  operation   text        NOT NULL,            -- try | confirm | cancel
  origin      text        NOT NULL,            -- try | cancel-first (the Try's row written by its Cancel) | confirm | cancel
  outcome     text        NOT NULL,            -- RAN | EMPTY_ROLLBACK (a cancel with nothing to release) | FENCED (a cancel-first try row)
  result      bytea       NOT NULL,            -- what the body returned (answered to a duplicate); empty for none
  created_at  timestamptz NOT NULL DEFAULT now(), -- the database's clock: the retention is counted on it
  refusals    int         NOT NULL DEFAULT 0,  -- hanging Tries refused on this cancel-first row
  refused_at  timestamptz,                     -- the last of them
  PRIMARY KEY (tenant, global_id, branch_id, operation),
  CONSTRAINT converge_tcc_barrier_operation CHECK (operation IN ('try', 'confirm', 'cancel')),
  CONSTRAINT converge_tcc_barrier_origin CHECK (origin IN ('try', 'cancel-first', 'confirm', 'cancel'))
);

-- the purge (BatchPurger, oldest first, by created_at)
CREATE INDEX converge_tcc_barrier_created ON converge_tcc_barrier (created_at);
-- the console's list of refused (hanging) Tries
CREATE INDEX converge_tcc_barrier_refused ON converge_tcc_barrier (refused_at) WHERE refusals > 0;
