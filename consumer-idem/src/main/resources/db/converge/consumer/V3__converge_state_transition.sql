-- Converge consumer-idem schema, version 3: the append-only history of StateMachine transitions (issue 17.5).

-- One row per committed transition, inserted by the same statement as the compare-and-swap UPDATE of the
-- entity (a data-modifying CTE), so a row exists iff its transition committed. Never updated or deleted by
-- Converge. `final` is true when the target state has no outgoing transition; the latest row of an entity
-- whose `final` is false is an intermediate state (the console's and the stuck alerts' "stuck entity").
-- cause / message_id: the idempotent handler (consumer group) and message id the transition ran under,
-- or what the caller passed; null when neither said.
CREATE TABLE converge_state_transition (
    id          bigserial   PRIMARY KEY,
    machine     text        NOT NULL,
    entity_id   text        NOT NULL,
    tenant      text,
    from_state  text,
    to_state    text        NOT NULL,
    version     bigint      NOT NULL,
    cause       text,
    message_id  text,
    at          timestamptz NOT NULL DEFAULT now(),
    final       boolean     NOT NULL
);

-- the latest row per (machine, entity_id): DISTINCT ON (machine, entity_id) ... ORDER BY id DESC, and an
-- entity's history in order
CREATE INDEX converge_state_transition_entity ON converge_state_transition (machine, entity_id, id);
-- a payment's timeline by business id, whatever the machine
CREATE INDEX converge_state_transition_entity_id ON converge_state_transition (entity_id);
-- a payment's timeline by message id
CREATE INDEX converge_state_transition_message ON converge_state_transition (message_id) WHERE message_id IS NOT NULL;
-- stuck entities: the non-final rows by age (the latest row of each entity is then checked)
CREATE INDEX converge_state_transition_open ON converge_state_transition (at) WHERE NOT final;
