-- Converge consumer-idem schema, version 6: validates version 5's constraint. This scans the table under a SHARE UPDATE
-- EXCLUSIVE lock, which does not block the claims (inserts, updates, deletes) running meanwhile; it is a version of
-- its own so that no earlier statement's ACCESS EXCLUSIVE lock is held during the scan.
ALTER TABLE converge_dedup VALIDATE CONSTRAINT converge_dedup_catchall_day;
