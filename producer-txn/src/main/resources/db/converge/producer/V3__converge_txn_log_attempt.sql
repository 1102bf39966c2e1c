-- Issue 13.10. The attempt a row belongs to: a random token per publish, also carried by the broker
-- message (RocketMQ user property converge-attempt). A unit retried with the same message id sends a
-- new half message with a new token; a check-back for the dead attempt's half message then finds a
-- row of another attempt and answers ROLLBACK instead of committing the stale message. Null for rows
-- written before this migration and by backends without attempts (they match by message id, as before).
ALTER TABLE converge_txn_log ADD COLUMN attempt text;
