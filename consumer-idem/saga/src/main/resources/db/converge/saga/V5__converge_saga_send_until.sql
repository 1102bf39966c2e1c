-- The coordinator's send guard, stored at the saga's start (review of issue 33), so that an operator's retry or
-- compensate (SagaOps: converge saga, the console) refuses what the coordinator would refuse to send, without the
-- definitions or the coordinator's settings:
--   guarded_steps: the indexes of the steps whose commands are sent only while the saga is younger than the
--                  participants' retention (a SagaParticipant's step, whose rows the participant purges); a TCC
--                  branch's step is not one (its barrier keeps an unfinished branch's rows), nor a local step;
--   send_until:    the horizon of those steps: the saga's start plus converge.saga.participant-retention less the
--                  send margin (SagaBranchRetention.sendHorizon), by the coordinator's clock.
-- Null for a saga started before this migration: SagaOps then uses its own configured participant retention.
ALTER TABLE converge_saga
  ADD COLUMN send_until    timestamptz,
  ADD COLUMN guarded_steps integer[];
