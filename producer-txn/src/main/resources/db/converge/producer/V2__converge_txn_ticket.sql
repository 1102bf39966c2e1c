-- Issue 13.3. A check-back for a message older than the producer's log retention finds no row: the
-- row may have been purged after a committed unit (a broker that lost the END, a long broker outage),
-- so the check-back answers UNKNOWN (the broker asks again, then gives up per its transactionCheckMax)
-- and raises a ticket here for an operator: deliver or discard the message by hand. One row per
-- message; a repeated check-back counts itself in `checks`.
CREATE TABLE converge_txn_ticket (
  message_id     text        PRIMARY KEY,
  producer_group text        NOT NULL,
  topic          text        NOT NULL,
  kind           text        NOT NULL CHECK (kind IN ('CHECK_BACK_PAST_RETENTION')),
  reason         text        NOT NULL,
  status         text        NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'RESOLVED')),
  checks         integer     NOT NULL DEFAULT 1,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_check_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX converge_txn_ticket_open ON converge_txn_ticket (created_at) WHERE status = 'OPEN';

-- the purge is scoped to its producer group (each group has its own retention)
CREATE INDEX converge_txn_log_group_created_at ON converge_txn_log (producer_group, created_at);
DROP INDEX converge_txn_log_created_at;
