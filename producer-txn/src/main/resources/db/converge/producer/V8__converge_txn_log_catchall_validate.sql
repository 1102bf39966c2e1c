-- Converge producer schema, version 8: validates version 7's constraint. This scans the table under a SHARE UPDATE
-- EXCLUSIVE lock, which does not block the units' writes nor the check-backs running meanwhile; it is a version of its
-- own so that no earlier statement's ACCESS EXCLUSIVE lock is held during the scan.
ALTER TABLE converge_txn_log VALIDATE CONSTRAINT converge_txn_log_catchall_day;
