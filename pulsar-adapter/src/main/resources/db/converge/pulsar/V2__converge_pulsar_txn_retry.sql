-- Recovery retries a transaction whose re-publish fails with backoff, and parks it after its maximum
-- attempts when Pulsar refuses it (topic gone, message too large, not authorized): a failing transaction
-- never blocks the others of its group. A parked transaction keeps its messages until it is resumed.
ALTER TABLE converge_pulsar_txn
  ADD COLUMN attempts        integer     NOT NULL DEFAULT 0,
  ADD COLUMN next_attempt_at timestamptz,
  ADD COLUMN parked_at       timestamptz,
  ADD COLUMN reason          text;

-- the parked transactions of a group, for operators and the txn.pulsar.parked gauge
CREATE INDEX converge_pulsar_txn_parked ON converge_pulsar_txn (producer_group, parked_at) WHERE parked_at IS NOT NULL;
