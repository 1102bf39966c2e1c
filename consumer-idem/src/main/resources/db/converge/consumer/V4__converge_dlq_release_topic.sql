-- Converge consumer-idem schema, version 4: a release round reads one handler's topics only (issue 31.4).

-- A group may consume several topics (a handler per topic, or a Pulsar subscription on several); a release
-- round lists the held heads and the rows marked for re-drive of (consumer group, the handler's topics) in id
-- order, so that one topic's rows never run through another topic's handler. The index holds those two kinds
-- of parked rows only (marked rows may have no key, so converge_dlq_parked_key does not cover them), and is
-- empty while nothing is held or marked.
CREATE INDEX converge_dlq_release ON converge_dlq (consumer_group, topic, id)
    WHERE status = 'PARKED' AND reason_code IN ('HELD', 'REDRIVE');
