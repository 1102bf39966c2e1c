-- Converge outbox schema, version 4: validates version 3's constraint. This scans the table under a SHARE UPDATE
-- EXCLUSIVE lock, which does not block the writers and relays (inserts, updates, deletes) running meanwhile; it is a
-- version of its own so that no earlier statement's ACCESS EXCLUSIVE lock is held during the scan.
ALTER TABLE converge_outbox VALIDATE CONSTRAINT converge_outbox_catchall_day;
