-- Fewer indexes for the barrier's inserts: a branch (Try and Confirm) maintained seven index entries, now four.
--
-- The primary key leads with global_id: the same unique key (tenant, global id, branch id, operation), in an order
-- that also serves converge trace (WHERE global_id = ANY(...), no tenant), so converge_tcc_barrier_global goes.
-- The barrier's lookups and the purge's delete name all four (or the first three) columns and use it as before.
--
-- converge_tcc_barrier_created (every row) only served TccBarrierOps.unfinished (the Tries that ran, oldest
-- first); a partial index on those rows replaces it. Confirm, Cancel and cancel-first rows no longer enter it.
-- Kept: converge_tcc_barrier_finished (the purge), converge_tcc_barrier_refused (the console's refused list; rows
-- enter it only when a Try is refused).
ALTER TABLE converge_tcc_barrier
  DROP CONSTRAINT converge_tcc_barrier_pkey,
  ADD CONSTRAINT converge_tcc_barrier_pkey PRIMARY KEY (global_id, tenant, branch_id, operation);
DROP INDEX converge_tcc_barrier_global;
DROP INDEX converge_tcc_barrier_created;
CREATE INDEX converge_tcc_barrier_tried ON converge_tcc_barrier (created_at) WHERE operation = 'try' AND origin = 'try';
