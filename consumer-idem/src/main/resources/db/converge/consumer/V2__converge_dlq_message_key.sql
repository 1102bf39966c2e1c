-- Converge consumer-idem schema, version 2: a parked message holds the later messages of its key.

-- The broker key of a parked message (RocketMQ KEYS, Pulsar key); null when it had none. While a key of
-- (consumer group, topic, tenant) has a PARKED row, its later messages are parked behind it with reason
-- code HELD, and run in id order once no earlier PARKED row of the key remains.
ALTER TABLE converge_dlq ADD COLUMN message_key TEXT;

-- The hold check folded into the consumer's claim, and the release scan: both look up the PARKED rows
-- of one key; the index holds parked rows only, so it is empty while nothing is parked.
CREATE INDEX converge_dlq_parked_key ON converge_dlq (consumer_group, topic, tenant, message_key, id)
    WHERE status = 'PARKED' AND message_key IS NOT NULL;
