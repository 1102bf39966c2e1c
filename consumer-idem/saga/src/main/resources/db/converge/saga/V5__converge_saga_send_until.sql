-- The saga's send horizon, stored at start (review of issue 33): until when the coordinator may still send a
-- command of a step whose participant's rows are purged by retention (SagaBranchRetention: created_at plus the
-- participant retention less its send margin), or 'infinity' when the saga has none (a TCC global transaction: its
-- participants' barrier keeps an unfinished branch's rows, so the coordinator sends its Confirm or Cancel at any age).
-- An operator's retry or compensate (SagaOps) is refused past it, exactly as the coordinator would refuse to send.
-- Null for a saga started before this migration: SagaOps then uses its configured participant retention.
ALTER TABLE converge_saga ADD COLUMN send_until timestamptz;
