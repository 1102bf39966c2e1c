-- Issue 36.3. A unit's Pulsar transaction and its messages in ONE row, written by one INSERT that travels with
-- the unit's DB COMMIT. Before this version a unit wrote a converge_pulsar_txn row, a converge_pulsar_txn_message
-- row per message (a foreign key to check) and a converge_txn_log row per message.
--
-- New units are logged here only. converge_pulsar_txn and converge_pulsar_txn_message stay as they are: rows an
-- earlier version logged there are still recovered, listed, resumed and deleted by this version (its recovery reads
-- both tables). An instance of an earlier version never reads this table: during a rolling upgrade it cannot take a
-- row of it for a transaction without messages (and delete it after re-publishing nothing); the new instances
-- recover the units logged here.
--
-- The messages, in publish order: element i of each array is message i (1-based, as SQL counts).
--   message_ids, topics  the message's id and topic
--   msg_keys             its key, NULL for a message without one
--   properties           the properties of message 1 as name, value, name, value, ..., then NULL, then those of
--                        message 2, then NULL, ... (a message's list always ends with a NULL)
--   payloads             its payload
CREATE TABLE converge_pulsar_unit (
  txn_most        bigint      NOT NULL,
  txn_least       bigint      NOT NULL,
  producer_group  text        NOT NULL,
  deadline        timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  attempts        integer     NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  parked_at       timestamptz,
  reason          text,
  message_ids     text[]      NOT NULL,
  topics          text[]      NOT NULL,
  msg_keys        text[]      NOT NULL,
  properties      text[]      NOT NULL,
  payloads        bytea[]     NOT NULL,
  PRIMARY KEY (txn_most, txn_least),
  CHECK (cardinality(message_ids) > 0 AND cardinality(topics) = cardinality(message_ids)
         AND cardinality(msg_keys) = cardinality(message_ids) AND cardinality(payloads) = cardinality(message_ids))
);

-- recovery's claim: the due transactions of one group, oldest first; a confirmed transaction's row is deleted
CREATE INDEX converge_pulsar_unit_group ON converge_pulsar_unit (producer_group, created_at);
-- the parked transactions of a group, for operators and the txn.pulsar.parked gauge
CREATE INDEX converge_pulsar_unit_parked ON converge_pulsar_unit (producer_group, parked_at) WHERE parked_at IS NOT NULL;

-- What operators read (PulsarTxns, the console, converge doctor): every logged, unconfirmed Pulsar transaction
-- whichever table holds it, with its messages' ids, topics and keys in publish order. Recovery reads the tables.
CREATE VIEW converge_pulsar_logged AS
SELECT txn_most, txn_least, producer_group, deadline, created_at, attempts, next_attempt_at, parked_at, reason,
       message_ids, topics, msg_keys
  FROM converge_pulsar_unit
UNION ALL
SELECT t.txn_most, t.txn_least, t.producer_group, t.deadline, t.created_at, t.attempts, t.next_attempt_at,
       t.parked_at, t.reason, coalesce(m.message_ids, '{}'), coalesce(m.topics, '{}'), coalesce(m.msg_keys, '{}')
  FROM converge_pulsar_txn t
  LEFT JOIN LATERAL (SELECT array_agg(x.message_id ORDER BY x.seq, x.message_id) AS message_ids,
                            array_agg(x.topic ORDER BY x.seq, x.message_id) AS topics,
                            array_agg(x.msg_key ORDER BY x.seq, x.message_id) AS msg_keys
                       FROM converge_pulsar_txn_message x
                      WHERE x.txn_most = t.txn_most AND x.txn_least = t.txn_least) m ON true;
