-- Heartbeats of the outbox's CDC relays: Debezium's heartbeat.action.query replaces its relay's row every
-- heartbeat interval. The table is in the relay's publication (inserts), so the relay receives a change
-- and its slot confirms a newer WAL position while only other tables change (PostgreSQL sends nothing
-- for transactions without a published change, and the slot would hold the WAL). One row per relay.
CREATE TABLE converge_cdc_heartbeat (
  relay_name  text        NOT NULL,
  beat_at     timestamptz NOT NULL DEFAULT now()
);
