-- Converge outbox schema, version 3: first step of partitioning converge_outbox by day (issue 36.4; outbox-relay
-- README, "Partitions by day"). Both statements change the catalog only (no rewrite, no scan): a constant default is
-- stored once, and a NOT VALID constraint is checked for new rows only. Version 4 validates it without blocking writes,
-- version 5 makes this table the catch-all partition of a table partitioned by `day`.

-- The partition a row was written to: the UTC day the producer wrote it while that day's partition exists, else the
-- catch-all's sentinel day 1970-01-01. Every existing row is a catch-all row.
ALTER TABLE converge_outbox ADD COLUMN day date NOT NULL DEFAULT DATE '1970-01-01';

-- The catch-all's partition bound as a constraint: once valid, attaching the table as that partition needs no scan.
ALTER TABLE converge_outbox ADD CONSTRAINT converge_outbox_catchall_day
    CHECK (day >= DATE '1970-01-01' AND day < DATE '1970-01-02') NOT VALID;
