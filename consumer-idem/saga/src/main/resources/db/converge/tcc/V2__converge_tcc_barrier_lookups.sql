-- converge trace GLOBAL_ID reads a global transaction's barrier rows by global id; the primary key starts with the
-- tenant, which the trace does not know.
CREATE INDEX converge_tcc_barrier_global ON converge_tcc_barrier (global_id);
-- the purge reads the finished branches (a confirm or cancel row past the retention), oldest first: the unfinished
-- Tries it never purges would otherwise be scanned again on every batch
CREATE INDEX converge_tcc_barrier_finished ON converge_tcc_barrier (created_at) WHERE operation IN ('confirm', 'cancel');
