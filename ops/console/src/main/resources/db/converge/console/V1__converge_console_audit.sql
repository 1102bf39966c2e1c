-- The console's audit: one row per decision a person took in the console (resume a parked outbox key,
-- re-drive or discard a dead letter, resolve a ticket, ...): who, when, what, on which item, with their
-- note, and whether the item was still in the state the action needs (DONE) or not (NOT_APPLICABLE).
-- Append-only: rows are never updated.
CREATE TABLE converge_console_audit (
  id        bigserial   PRIMARY KEY,
  at        timestamptz NOT NULL DEFAULT now(),
  operator  text        NOT NULL,
  action    text        NOT NULL,
  kind      text        NOT NULL,
  target    text        NOT NULL,
  note      text,
  outcome   text        NOT NULL CHECK (outcome IN ('DONE', 'NOT_APPLICABLE'))
);

-- the audit page and a target's history: newest first
CREATE INDEX converge_console_audit_at ON converge_console_audit (at);
CREATE INDEX converge_console_audit_target ON converge_console_audit (kind, target);
