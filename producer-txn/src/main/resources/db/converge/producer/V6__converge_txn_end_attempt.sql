-- Issue 17 (review): one row per attempt of a half message, not per message id. A unit retried with the same
-- message id publishes a new attempt (a random token per publish, see V3): keyed by the id alone, the second
-- attempt's END failure was dropped by the first attempt's resolved row (the console missed a waiting unit), and
-- a check-back of one attempt updated the other's row. Rows without an attempt (check-backs of messages sent
-- without one) keep one row per message id.
ALTER TABLE converge_txn_end DROP CONSTRAINT converge_txn_end_pkey;
CREATE UNIQUE INDEX converge_txn_end_attempt ON converge_txn_end (message_id, (coalesce(attempt, '')));
-- a primary key all the same (a surrogate): PostgreSQL refuses UPDATE and DELETE on a table without a replica
-- identity that is in a logical-replication publication (CDC of the whole schema)
ALTER TABLE converge_txn_end ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
