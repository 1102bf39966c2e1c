-- Converge Idempotency-Key schema, version 5: converge_idempotency_key partitioned by day (issue 36.4; consumer-idem
-- README, "Idempotency-Key partitions by day").
--
-- The existing table becomes the catch-all partition, as it is: renamed and attached (its valid constraint
-- converge_idempotency_key_catchall_day proves the bound, so the attach does not scan it; its indexes are kept). It
-- holds the keys claimed before this version and, from now on, the keys first claimed on a day that has no partition;
-- it is purged in bounded batches by expires_at as before. The day partitions (converge_idempotency_key_pYYYYMMDD,
-- each with its own primary key and an index on greatest(expires_at, leased_until)) are created ahead and dropped
-- whole by IdempotencyKeyPurger.
--
-- The parent has no primary key (a partitioned table's must contain the partition key, and (tenant, idem_key) is what
-- must be unique). A key's row stays for its whole life in the partition of the day it was first claimed (no statement
-- changes `day`), and every row is inserted by converge_idempotency_claim below, which serializes the claims of one key
-- and inserts only when no partition holds it. `day` has no default on the parent: an INSERT that does not go through
-- the function (an instance of an earlier version) fails instead of claiming a key another partition holds.
-- Locks: the renames and the attach wait for the claims in flight, then hold the table for a catalog change only.
ALTER TABLE converge_idempotency_key RENAME TO converge_idempotency_key_catchall;
ALTER INDEX converge_idempotency_key_pkey RENAME TO converge_idempotency_key_catchall_pkey;
ALTER INDEX converge_idempotency_key_expires_at RENAME TO converge_idempotency_key_catchall_expires_at;
ALTER TABLE converge_idempotency_key_catchall ALTER COLUMN day DROP DEFAULT;

CREATE TABLE converge_idempotency_key (
    tenant            VARCHAR(64)   NOT NULL,
    idem_key          VARCHAR(255)  NOT NULL,
    fingerprint       CHAR(64)      NOT NULL,
    method            VARCHAR(16)   NOT NULL,
    path              VARCHAR(2048) NOT NULL,
    status            VARCHAR(16)   NOT NULL,
    lease_owner       UUID          NOT NULL,
    leased_until      TIMESTAMPTZ   NOT NULL,
    expected_ms       BIGINT        NOT NULL,
    claimed_at        TIMESTAMPTZ   NOT NULL,
    expires_at        TIMESTAMPTZ   NOT NULL,
    completed_at      TIMESTAMPTZ,
    response_status   INT,
    response_headers  TEXT,
    response_body     BYTEA,
    work_committed_at TIMESTAMPTZ,
    day               DATE          NOT NULL    -- no default: see above
) PARTITION BY RANGE (day);

ALTER TABLE converge_idempotency_key ATTACH PARTITION converge_idempotency_key_catchall
    FOR VALUES FROM (DATE '1970-01-01') TO (DATE '1970-01-02');

-- The claim (io.converge.consumer.http.internal.KeyStore), one round trip: true when it inserted the key's row, false
-- when a partition holds the key (the caller reads it: replay, conflict, busy or takeover, as before).
--
-- One claim per key across partitions: the claims of one (tenant, key) take the same transaction-scoped advisory lock,
-- so they run one after the other, each in its own transaction (the caller's autocommitted statement); the lock is
-- released after the holder's commit is visible. The lookup after the lock is a new statement of a VOLATILE function
-- in READ COMMITTED, so its snapshot is taken after the lock was had: it sees the row of any claim of the key that
-- committed before, whatever partition holds it. Hence a second row is inserted only when the first is gone (released
-- by its owner, or purged or dropped once expired: the key is free). Any other isolation level reads the transaction's
-- first snapshot, taken before the lock, and could insert a second row in another partition: refused (SQLSTATE CVI01,
-- the caller claims again under READ COMMITTED).
--
-- The parent is locked first (ROW EXCLUSIVE, what the INSERT takes anyway; no claim waits for another on it): a
-- partition is created or dropped (DayPartitions: SHARE ROW EXCLUSIVE, ACCESS EXCLUSIVE) before or after a claim,
-- never between its lookup and its insert. The row goes to the partition of p_day (null: the database's UTC day)
-- when it exists in converge_idempotency_key's own schema, never looked up through the search path, else to the
-- catch-all; where it goes does not matter to the guarantee (the lookup reads every partition), only to retention.
CREATE FUNCTION converge_idempotency_claim(p_fingerprint varchar, p_method varchar, p_path varchar, p_owner uuid,
                                           p_lease_ms bigint, p_expected_ms bigint, p_ttl_ms bigint,
                                           p_tenant varchar, p_key varchar, p_day date) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_day date := coalesce(p_day, (now() AT TIME ZONE 'UTC')::date);
  v_now timestamptz;
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION USING ERRCODE = 'CVI01', MESSAGE = 'converge_idempotency_claim: not claimed in '
      || upper(current_setting('transaction_isolation')) || ' (READ COMMITTED needed)';
  END IF;
  LOCK TABLE converge_idempotency_key IN ROW EXCLUSIVE MODE;
  -- the length keeps (tenant 'a:b', key 'c') apart from ('a', 'b:c'); a collision of the hash only makes two keys wait.
  -- The two-key form: a lock space of its own, apart from every one-key (bigint) advisory lock, the outbox's per-key
  -- locks and an application's, so that no lock held for a business transaction can hold a claim
  PERFORM pg_advisory_xact_lock(hashtext('converge_idempotency_key'),
      hashtext(length(p_tenant) || ':' || p_tenant || p_key));
  -- an expired key is a new request (as KeyStore's TAKE_OVER of an expired row): its row is replaced rather than
  -- updated where it is, so that the new claim lives in today's partition and a reused key never keeps its first
  -- day's partition from being dropped
  DELETE FROM converge_idempotency_key
   WHERE tenant = p_tenant AND idem_key = p_key AND expires_at <= clock_timestamp();
  PERFORM 1 FROM converge_idempotency_key WHERE tenant = p_tenant AND idem_key = p_key;
  IF FOUND THEN
    RETURN false;
  END IF;
  -- the times of the claim are taken after the locks: a claim that waited for them must not start with its lease
  -- already run down (now() is the transaction's start)
  v_now := clock_timestamp();
  IF to_regclass((SELECT relnamespace::regnamespace::text FROM pg_class
                   WHERE oid = 'converge_idempotency_key'::regclass)
                 || '.converge_idempotency_key_p' || to_char(v_day, 'YYYYMMDD')) IS NULL THEN
    v_day := DATE '1970-01-01';
  END IF;
  -- every time is the database's (one clock for every instance)
  INSERT INTO converge_idempotency_key (tenant, idem_key, fingerprint, method, path, status, lease_owner, leased_until,
      expected_ms, claimed_at, expires_at, day)
  VALUES (p_tenant, p_key, p_fingerprint, p_method, p_path, 'PROCESSING', p_owner,
      v_now + p_lease_ms * interval '1 millisecond', p_expected_ms, v_now, v_now + p_ttl_ms * interval '1 millisecond',
      v_day)
  ON CONFLICT DO NOTHING;
  RETURN FOUND;
END
$$;
