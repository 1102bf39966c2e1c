-- Converge producer schema, version 9: converge_txn_log partitioned by day (issue 36.4; producer-txn README,
-- "Partitions by day").
--
-- The existing table becomes the catch-all partition, as it is: renamed and attached (its valid constraint
-- converge_txn_log_catchall_day proves the bound, so the attach does not scan it; its indexes are kept, its primary key
-- keeps its name converge_txn_log_pkey). It holds the rows logged before this version and, from now on, the rows of
-- foreign (non-UUIDv7) ids and of v7 ids whose day has no partition; it is purged in bounded batches as before. The
-- day partitions (converge_txn_log_pYYYYMMDD) are created ahead and dropped whole by the log's purge (TxnLog.purge).
--
-- The parent has no primary key (a partitioned table's must contain the partition key, and the message id alone is
-- what must be unique; a unique index on (message_id, day) would have to be built on the catch-all under a lock that
-- stops the writes): each partition has its own primary key (message_id), and the writes route every id to one
-- partition only (TxnLog, CheckBack), so that the id stays unique across partitions.
-- Locks: the rename and the attach wait for the units and check-backs in flight, then hold the table for a catalog
-- change only. No instance of an earlier version may run from here on (README: its INSERT names a conflict target
-- this table has no index for, so each of its units fails).
ALTER TABLE converge_txn_log RENAME TO converge_txn_log_catchall;
ALTER INDEX converge_txn_log_group_created_at RENAME TO converge_txn_log_catchall_group_created_at;

CREATE TABLE converge_txn_log (
  message_id     text        NOT NULL,
  producer_group text        NOT NULL,
  topic          text        NOT NULL,
  outcome        text        NOT NULL
                 CONSTRAINT converge_txn_log_outcome_check CHECK (outcome IN ('COMMITTED', 'ROLLED_BACK')),
  created_at     timestamptz NOT NULL DEFAULT now(),
  attempt        text,
  day            date        NOT NULL DEFAULT DATE '1970-01-01'
) PARTITION BY RANGE (day);

-- the purge of a group, and a day partition's owner and last row (the purge drops it only when that is past the
-- retention); the catch-all's existing index is attached, not rebuilt
CREATE INDEX converge_txn_log_group_created_at ON converge_txn_log (producer_group, created_at);

ALTER TABLE converge_txn_log ATTACH PARTITION converge_txn_log_catchall
    FOR VALUES FROM (DATE '1970-01-01') TO (DATE '1970-01-02');
