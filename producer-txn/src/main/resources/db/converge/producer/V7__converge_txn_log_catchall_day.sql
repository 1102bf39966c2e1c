-- Converge producer schema, version 7: first step of partitioning converge_txn_log by day (issue 36.4), as the
-- consumer's V5..V7 did for converge_dedup. Both statements change the catalog only (no rewrite, no scan): a constant
-- default is stored once, and a NOT VALID constraint is checked for new rows only. Version 8 validates it without
-- blocking writes, version 9 makes this table the catch-all partition of a table partitioned by `day`.

-- The partition a row was routed to: the UTC day of its UUIDv7 message id while that day's partition exists, else the
-- catch-all's sentinel day 1970-01-01 (producer-txn README, "Partitions by day"). Every existing row is a catch-all row.
ALTER TABLE converge_txn_log ADD COLUMN day DATE NOT NULL DEFAULT DATE '1970-01-01';

-- The catch-all's partition bound as a constraint: once valid, attaching the table as that partition needs no scan.
ALTER TABLE converge_txn_log ADD CONSTRAINT converge_txn_log_catchall_day
    CHECK (day >= DATE '1970-01-01' AND day < DATE '1970-01-02') NOT VALID;
