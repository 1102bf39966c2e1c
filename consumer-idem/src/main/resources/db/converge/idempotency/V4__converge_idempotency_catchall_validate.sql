-- Converge Idempotency-Key schema, version 4: validates version 3's constraint. This scans the table under a SHARE
-- UPDATE EXCLUSIVE lock, which does not block the claims (inserts, updates, deletes) running meanwhile; it is a version
-- of its own so that no earlier statement's ACCESS EXCLUSIVE lock is held during the scan.
ALTER TABLE converge_idempotency_key VALIDATE CONSTRAINT converge_idempotency_key_catchall_day;
