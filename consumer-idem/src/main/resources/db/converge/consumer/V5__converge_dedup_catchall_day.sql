-- Converge consumer-idem schema, version 5: first step of partitioning converge_dedup by day (issue 36.4).
-- Both statements change the catalog only (no rewrite, no scan): a constant default is stored once, and a NOT VALID
-- constraint is checked for new rows only. Version 6 validates it without blocking writes, version 7 makes this table
-- the catch-all partition of a table partitioned by `day`.

-- The partition a claim was routed to: the day of its UUIDv7 message id while that day's partition exists, else the
-- catch-all's sentinel day 1970-01-01 (consumer-idem README, "Partitions by day"). Every existing row is a catch-all
-- row.
ALTER TABLE converge_dedup ADD COLUMN day DATE NOT NULL DEFAULT DATE '1970-01-01';

-- The catch-all's partition bound as a constraint: once valid, attaching the table as that partition needs no scan.
ALTER TABLE converge_dedup ADD CONSTRAINT converge_dedup_catchall_day
    CHECK (day >= DATE '1970-01-01' AND day < DATE '1970-01-02') NOT VALID;
