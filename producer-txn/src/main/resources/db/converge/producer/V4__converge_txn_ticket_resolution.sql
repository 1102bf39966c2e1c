-- Who closed a converge_txn_ticket, when, and what they did (the `converge txn resolve` command): an
-- operator delivers or discards the message by hand, then resolves the ticket with a note.
ALTER TABLE converge_txn_ticket ADD COLUMN resolved_by text;
ALTER TABLE converge_txn_ticket ADD COLUMN resolved_at timestamptz;
ALTER TABLE converge_txn_ticket ADD COLUMN note text;
