-- Lookups by saga id and by message id that the console, converge trace and SagaOps make (issue 33 review): without
-- these they scan the whole table (converge_saga_event is never purged while its saga row exists).
CREATE INDEX converge_saga_ticket_saga ON converge_saga_ticket (saga_id);
CREATE INDEX converge_saga_event_message ON converge_saga_event (message_id) WHERE message_id IS NOT NULL;
CREATE INDEX converge_saga_branch_saga ON converge_saga_branch (saga_id);
