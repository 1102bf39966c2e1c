-- The transactional outbox: one row per message, inserted in the same DB transaction as the business
-- writes; the relay publishes unpublished rows in seq order per order_key and marks them published.
-- seq is the order of insertion; writes of one key are serialised by the business row they touch, so
-- seq order is the commit order of one key.
CREATE TABLE converge_outbox (
  seq             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  message_id      text        NOT NULL,
  producer_group  text        NOT NULL,
  topic           text        NOT NULL,
  order_key       text        NOT NULL,            -- the message key, or its id when it has none
  msg_key         text,
  tag             text,
  header_names    text[]      NOT NULL,            -- the envelope and application headers, as sent
  header_values   text[]      NOT NULL,
  payload         bytea       NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  attempts        int         NOT NULL DEFAULT 0,  -- failed sends the broker refused for this message
  next_attempt_at timestamptz,                     -- backoff of a failed row; NULL = due now
  last_error      text,
  parked_at       timestamptz,                     -- set after too many attempts: the key waits for resume
  published_at    timestamptz
);

-- the claim: unpublished rows in seq order
CREATE INDEX converge_outbox_pending ON converge_outbox (seq) WHERE published_at IS NULL;
-- the per-key order check: "is there an earlier unpublished row of this key?"
CREATE INDEX converge_outbox_pending_key ON converge_outbox (order_key, seq) WHERE published_at IS NULL;
-- the purge: published rows, oldest first
CREATE INDEX converge_outbox_published ON converge_outbox (published_at) WHERE published_at IS NOT NULL;
