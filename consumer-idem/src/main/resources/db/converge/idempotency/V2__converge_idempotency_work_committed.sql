-- Converge Idempotency-Key schema, version 2 (module consumer-idem, applied as Migrations "idempotency").

-- Set by the handler's own database transaction just before its COMMIT (UPDATE ... WHERE tenant, idem_key and
-- lease_owner), so it commits if and only if the handler's work commits. A claim left in progress (its answer was
-- never stored: the store failed or the process died after the commit) whose marker is set is never run again: a
-- retry that takes it over gets 409 answer-lost, stored and replayed. NULL: no work of this claim committed.
ALTER TABLE converge_idempotency_key ADD COLUMN work_committed_at TIMESTAMPTZ;
