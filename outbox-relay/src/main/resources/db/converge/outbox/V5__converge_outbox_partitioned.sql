-- Converge outbox schema, version 5: converge_outbox partitioned by day (issue 36.4; outbox-relay README, "Partitions
-- by day").
--
-- The existing table becomes the catch-all partition, as it is: renamed and attached (its valid constraint
-- converge_outbox_catchall_day proves the bound, so the attach does not scan it; its indexes are attached, not
-- rebuilt). It keeps its rows, published or not, and the relays go on sending them in seq order; from now on it
-- also takes the rows of writers that do not route (an earlier version, a hand-written INSERT) and of days that have
-- no partition. It is purged in bounded batches as before. The day partitions (converge_outbox_pYYYYMMDD) are
-- created ahead and dropped whole by Outbox.purge, only when every row in them is published.
--
-- seq stays one counter for every partition: a sequence of its own, the parent column's default (on PostgreSQL 15 and
-- 16 as on 17), continuing after the last value the old identity handed out; the catch-all's identity is dropped, so
-- that no second counter is left to draw from. The parent has no primary key (a partitioned table's must contain the
-- partition key): each partition has its own primary key on seq (the catch-all keeps its own), and the one sequence
-- keeps seq unique across them.
-- Locks: the rename waits for the writers and relays in flight, then the table is held for catalog changes only.
ALTER TABLE converge_outbox RENAME TO converge_outbox_catchall;
ALTER INDEX converge_outbox_pkey RENAME TO converge_outbox_catchall_pkey;
ALTER INDEX converge_outbox_pending RENAME TO converge_outbox_catchall_pending;
ALTER INDEX converge_outbox_pending_line RENAME TO converge_outbox_catchall_pending_line;
ALTER INDEX converge_outbox_published RENAME TO converge_outbox_catchall_published;

CREATE SEQUENCE converge_outbox_seq AS bigint;
SELECT setval('converge_outbox_seq', greatest(
    coalesce(pg_sequence_last_value(pg_get_serial_sequence('converge_outbox_catchall', 'seq')::regclass), 0),
    coalesce((SELECT max(seq) FROM converge_outbox_catchall), 0)) + 1, false);
ALTER TABLE converge_outbox_catchall ALTER COLUMN seq DROP IDENTITY;

CREATE TABLE converge_outbox (
  seq             bigint      NOT NULL DEFAULT nextval('converge_outbox_seq'),
  message_id      text        NOT NULL,
  producer_group  text        NOT NULL,
  topic           text        NOT NULL,
  order_key       text        NOT NULL,
  msg_key         text,
  tag             text,
  header_names    text[]      NOT NULL,
  header_values   text[]      NOT NULL,
  payload         bytea       NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  attempts        int         NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_error      text,
  parked_at       timestamptz,
  published_at    timestamptz,
  tenant          text        NOT NULL
      GENERATED ALWAYS AS (coalesce(header_values[array_position(header_names, 'converge-tenant')], 'default')) STORED,
  day             date        NOT NULL DEFAULT DATE '1970-01-01'
) PARTITION BY RANGE (day);
ALTER SEQUENCE converge_outbox_seq OWNED BY converge_outbox.seq;

-- the indexes of version 1 and 2, on every partition; the catch-all's are attached, not rebuilt
CREATE INDEX converge_outbox_pending ON converge_outbox (seq) WHERE published_at IS NULL;
CREATE INDEX converge_outbox_pending_line ON converge_outbox (order_key, tenant, topic, seq) WHERE published_at IS NULL;
CREATE INDEX converge_outbox_published ON converge_outbox (published_at) WHERE published_at IS NOT NULL;

ALTER TABLE converge_outbox ATTACH PARTITION converge_outbox_catchall
    FOR VALUES FROM (DATE '1970-01-01') TO (DATE '1970-01-02');

-- The CDC relays' publications named the old table: they now name the partitioned one, and publish its partitions'
-- rows under its name (publish_via_partition_root), partitions created later too. A publication this role may not
-- alter is left to its relay, which does the same when it starts (CdcSlot).
DO $$
DECLARE
  pub name;
BEGIN
  FOR pub IN SELECT p.pubname FROM pg_publication p JOIN pg_publication_rel r ON r.prpubid = p.oid
              WHERE r.prrelid = 'converge_outbox_catchall'::regclass LOOP
    BEGIN
      EXECUTE format('ALTER PUBLICATION %I ADD TABLE %s', pub, 'converge_outbox'::regclass);
      EXECUTE format('ALTER PUBLICATION %I DROP TABLE %s', pub, 'converge_outbox_catchall'::regclass);
      EXECUTE format('ALTER PUBLICATION %I SET (publish_via_partition_root = true)', pub);
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE WARNING 'publication % is left to its CDC relay: %', pub, SQLERRM;
    END;
  END LOOP;
END
$$;
