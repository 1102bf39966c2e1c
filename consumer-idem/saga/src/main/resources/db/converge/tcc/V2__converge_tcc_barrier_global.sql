-- converge trace GLOBAL_ID reads a global transaction's barrier rows by global id; the primary key starts with the
-- tenant, which the trace does not know.
CREATE INDEX converge_tcc_barrier_global ON converge_tcc_barrier (global_id);
