-- Recovery re-publishes a unit's messages in the order they were published, not by message_id (ids may
-- be set by the application): seq is the message's place in its unit's publish order (0, 1, ...).
-- Rows logged before this version have 0 and keep the id order they were recovered in before.
ALTER TABLE converge_pulsar_txn_message ADD COLUMN seq integer NOT NULL DEFAULT 0;
