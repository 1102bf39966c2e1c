-- The Pulsar transactions of TxnProducer, written in the same DB transaction as the business writes:
-- after a crash between the DB commit and the Pulsar commit, recovery commits the transaction by id,
-- or re-publishes its messages (same ids) when the broker may have aborted it on timeout.
CREATE TABLE converge_pulsar_txn (
  txn_most       bigint      NOT NULL,
  txn_least      bigint      NOT NULL,
  producer_group text        NOT NULL,
  deadline       timestamptz NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (txn_most, txn_least)
);

-- recovery's scan: the open transactions of one group, oldest first; a confirmed transaction's row is deleted
CREATE INDEX converge_pulsar_txn_group ON converge_pulsar_txn (producer_group, created_at);

CREATE TABLE converge_pulsar_txn_message (
  message_id  text   PRIMARY KEY,
  txn_most    bigint NOT NULL,
  txn_least   bigint NOT NULL,
  topic       text   NOT NULL,
  msg_key     text,
  properties  text[] NOT NULL,
  payload     bytea  NOT NULL,
  FOREIGN KEY (txn_most, txn_least) REFERENCES converge_pulsar_txn ON DELETE CASCADE
);

CREATE INDEX converge_pulsar_txn_message_txn ON converge_pulsar_txn_message (txn_most, txn_least);
