-- The saga coordinator's tables (module converge-saga, issue 32).
--
-- converge_saga: one row per saga, its state and what the coordinator does next. Every transition is one
-- compare-and-swap UPDATE ... WHERE id = ? AND version = ?, committed with the command it sends (TxnProducer).
CREATE TABLE converge_saga (
  id              text        PRIMARY KEY,
  tenant          text        NOT NULL,
  definition      text        NOT NULL,            -- SagaDefinition.name()
  state           text        NOT NULL,            -- RUNNING | COMPENSATING | COMPLETED | COMPENSATED | COMPENSATION_FAILED | STOPPED
  step            int         NOT NULL,            -- the index of the current step (forward), or of the step being compensated
  step_name       text,                            -- its name, for people (null once finished)
  attempt         int         NOT NULL DEFAULT 0,  -- the current step's attempt: part of the command id; a technical failure starts the next
  sends           int         NOT NULL DEFAULT 0,  -- sends of the current step in all (re-asks after a timeout and new attempts), bounded by its retry policy
  failures        int         NOT NULL DEFAULT 0,  -- failed sends of the current compensation (3 -> COMPENSATION_FAILED)
  awaiting        boolean     NOT NULL DEFAULT false, -- a command is out and its reply awaited; false: the next send is pending (backoff, rate limit)
  version         bigint      NOT NULL DEFAULT 0,
  data            jsonb       NOT NULL,
  next_attempt_at timestamptz,                     -- when the coordinator looks at it again (a reply's timeout, a backoff); null when finished
  deadline        timestamptz NOT NULL,            -- past it a running saga stops asking and compensates
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  last_error      text
);

-- the recovery poll: due sagas that are not finished
CREATE INDEX converge_saga_due ON converge_saga (next_attempt_at) WHERE next_attempt_at IS NOT NULL;

-- converge_saga_event: append-only, the checkpoint and the timeline of every saga (never updated, never deleted
-- while its saga row exists).
CREATE TABLE converge_saga_event (
  saga_id    text        NOT NULL,
  seq        bigint      GENERATED ALWAYS AS IDENTITY,  -- increasing in commit order per saga
  step       text,
  attempt    int,
  kind       text        NOT NULL,   -- STARTED | SENT | RESENT | REPLIED | DUPLICATE_REPLY | LATE_REPLY | TIMED_OUT | RETRIED | LOCAL_DONE | FAILED | DEADLINE | COMPENSATING | COMPENSATION_SENT | COMPENSATED | COMPENSATION_RETRIED | COMPLETED | COMPENSATION_FAILED | TICKET | STOPPED
  message_id text,                   -- the command or reply message it is about
  payload    text,                   -- the reply's body, an error, a note
  at         timestamptz NOT NULL,
  PRIMARY KEY (saga_id, seq)
);

-- converge_saga_ticket: a saga that needs a person (a compensation failed three times, a money anomaly).
CREATE TABLE converge_saga_ticket (
  id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  saga_id     text        NOT NULL,
  tenant      text        NOT NULL,
  step        text,
  kind        text        NOT NULL,  -- COMPENSATION_FAILED | ANOMALY
  reason      text        NOT NULL,
  status      text        NOT NULL DEFAULT 'OPEN',  -- OPEN | RESOLVED
  created_at  timestamptz NOT NULL,
  resolved_at timestamptz,
  resolved_by text,
  resolution  text
);
CREATE INDEX converge_saga_ticket_open ON converge_saga_ticket (created_at) WHERE status = 'OPEN';

-- converge_saga_branch: a participant's barrier and stored replies (SagaParticipant), one row per
-- (participant, saga, step, direction), inserts only (INSERT ... ON CONFLICT DO NOTHING, never a locking read of a
-- missing row). A compensation that finds no forward row inserts one as PREVENTED: the late forward command is
-- then refused (HANGING_REFUSED).
CREATE TABLE converge_saga_branch (
  participant text        NOT NULL,
  saga_id     text        NOT NULL,
  step        text        NOT NULL,
  direction   text        NOT NULL,  -- forward | compensate
  outcome     text        NOT NULL,  -- SUCCESS | BUSINESS_FAILURE | PREVENTED (forward: refused before it came) | EMPTY (compensation with nothing to undo)
  command_id  text,
  reply       bytea       NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (participant, saga_id, step, direction)
);
CREATE INDEX converge_saga_branch_created_at ON converge_saga_branch (created_at);
