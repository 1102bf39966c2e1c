-- Offsets of the outbox's CDC relay (Debezium's source offsets: the confirmed WAL position), one row per
-- key of each relay; written on every offset flush, read at start. Small: a few rows per relay.
CREATE TABLE converge_cdc_offset (
  relay_name  text        NOT NULL,
  offset_key  bytea       NOT NULL,
  offset_val  bytea,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (relay_name, offset_key)
);
