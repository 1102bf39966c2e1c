-- Converge outbox schema, version 2: a key's line is (tenant, topic, order key), as in the consumer's hold.
-- A parked row holds the later rows of its own line only: not another tenant's rows of the same key, nor
-- its tenant's rows of that key on another topic; a resume names the line.

-- The tenant of the message: its converge-tenant header, as written (by the producer or by hand), so the
-- column can never disagree with the envelope the relay sends. Adding it rewrites the table once.
ALTER TABLE converge_outbox ADD COLUMN tenant text NOT NULL
    GENERATED ALWAYS AS (coalesce(header_values[array_position(header_names, 'converge-tenant')], 'default')) STORED;

-- The per-line order check ("is there an earlier unpublished row of this line?"), the resume and the
-- lookups by order key (the CDC stream's keys, the console's trace) all lead with the order key.
DROP INDEX converge_outbox_pending_key;
CREATE INDEX converge_outbox_pending_line ON converge_outbox (order_key, tenant, topic, seq) WHERE published_at IS NULL;
