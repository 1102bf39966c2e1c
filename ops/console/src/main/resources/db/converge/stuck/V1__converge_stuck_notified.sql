-- Converge stuck alerts (module ops/console, applied as Migrations "stuck"): one row per stuck item the
-- webhook was (or is being) told about. The row is inserted with INSERT ... ON CONFLICT DO NOTHING before the
-- POST, so one instance of all those sharing the database owns each item, across restarts. next_attempt_at is
-- a lease while a POST runs and the backoff after a failed one; a row whose owner died is taken over by the
-- next instance that finds it due (at-least-once: a crash between the POST and its mark may repeat one call).
CREATE TABLE converge_stuck_notified (
    kind            text        NOT NULL,
    item_id         text        NOT NULL,
    payload         text        NOT NULL,   -- the JSON posted
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    PRIMARY KEY (kind, item_id)
);

-- the retry scan: undelivered rows that are due
CREATE INDEX converge_stuck_notified_due ON converge_stuck_notified (next_attempt_at) WHERE delivered_at IS NULL;
