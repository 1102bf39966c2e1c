-- The transaction log of TxnProducer: one row per published message, written in the same DB
-- transaction as the business writes (outcome COMMITTED), or by a check-back that found no row for a
-- message older than the local-transaction timeout (outcome ROLLED_BACK: a fence, so that a late
-- local commit of that message fails instead of committing business data whose message was dropped).
CREATE TABLE converge_txn_log (
  message_id     text        PRIMARY KEY,
  producer_group text        NOT NULL,
  topic          text        NOT NULL,
  outcome        text        NOT NULL CHECK (outcome IN ('COMMITTED', 'ROLLED_BACK')),
  created_at     timestamptz NOT NULL DEFAULT now()
);

-- the purge's query: oldest rows first, in small batches
CREATE INDEX converge_txn_log_created_at ON converge_txn_log (created_at);
