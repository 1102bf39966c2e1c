-- Converge consumer-idem schema, version 7: converge_dedup partitioned by day (issue 36.4; consumer-idem README,
-- "Partitions by day").
--
-- The existing table becomes the catch-all partition, as it is: renamed and attached (its valid constraint
-- converge_dedup_catchall_day proves the bound, so the attach does not scan it; its indexes are kept). It holds the
-- rows claimed before this version and, from now on, the claims of foreign (non-UUIDv7) ids and of v7 ids whose day
-- has no partition; it is purged in bounded batches by processed_at as before. The day partitions
-- (converge_dedup_pYYYYMMDD) are created ahead and dropped whole by DedupPurger.
--
-- The parent has no primary key (a partitioned table's must contain the partition key, and (tenant, group, message
-- id) is what must be unique): each partition has its own primary key (tenant, consumer_group, message_id), and the
-- claim routes every id to one partition only (DedupStatements), so that the key stays unique across partitions.
-- Locks: the rename and the attach wait for the claims in flight, then hold the table for a catalog change only.
ALTER TABLE converge_dedup RENAME TO converge_dedup_catchall;
ALTER INDEX converge_dedup_processed_at RENAME TO converge_dedup_catchall_processed_at;

CREATE TABLE converge_dedup (
    tenant          VARCHAR(64)  NOT NULL,
    consumer_group  VARCHAR(128) NOT NULL,
    message_id      VARCHAR(200) NOT NULL,
    outcome         VARCHAR(24)  NOT NULL,
    detail          TEXT,
    topic           VARCHAR(255) NOT NULL,
    processed_at    TIMESTAMPTZ  NOT NULL,
    day             DATE         NOT NULL DEFAULT DATE '1970-01-01'
) PARTITION BY RANGE (day);

-- the catch-all's batch purge, and a day partition's last claim (the purger drops it only when that is past the
-- retention); the catch-all's existing index is attached, not rebuilt
CREATE INDEX converge_dedup_processed_at ON converge_dedup (processed_at);

ALTER TABLE converge_dedup ATTACH PARTITION converge_dedup_catchall
    FOR VALUES FROM (DATE '1970-01-01') TO (DATE '1970-01-02');
