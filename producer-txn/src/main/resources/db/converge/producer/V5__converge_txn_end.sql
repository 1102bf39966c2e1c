-- Issue 17.3. RocketMQ half messages whose END did not reach the broker, waiting for its check-back: the
-- console's "units waiting for their END or check-back". Never written on a unit's path: the producer records
-- an END it dropped (its END lane was full), one that failed (refused, no answer) and every check-back (the
-- broker checks only half messages without an END) from a background thread, batched. A check-back answered
-- COMMIT or ROLLBACK resolves the row; UNKNOWN leaves it waiting. A unit whose producer crashed between its DB
-- commit and its END has no row until the first check-back (see the console's README). One row per message;
-- purged with the transaction log of its group.
CREATE TABLE converge_txn_end (
  message_id     text        PRIMARY KEY,
  producer_group text        NOT NULL,
  topic          text        NOT NULL,
  msg_key        text,
  tenant         text,
  attempt        text,
  -- the END that did not arrive; null when a check-back found the message first
  end_state      text        CHECK (end_state IN ('COMMIT', 'ROLLBACK')),
  reason         text        NOT NULL,
  status         text        NOT NULL DEFAULT 'WAITING' CHECK (status IN ('WAITING', 'RESOLVED')),
  -- when the END was due (dropped or failed), or when the half message was prepared (found by a check-back)
  since          timestamptz NOT NULL,
  checks         integer     NOT NULL DEFAULT 0,
  last_check_at  timestamptz,
  -- the latest check-back's answer: COMMIT, ROLLBACK or UNKNOWN
  answer         text,
  resolved_at    timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now()
);

-- the console and the stuck gauge: the waiting rows by age
CREATE INDEX converge_txn_end_waiting ON converge_txn_end (since) WHERE status = 'WAITING';
-- the purge, per producer group
CREATE INDEX converge_txn_end_group_created_at ON converge_txn_end (producer_group, created_at);
-- a payment's timeline by key
CREATE INDEX converge_txn_end_key ON converge_txn_end (msg_key) WHERE msg_key IS NOT NULL;
