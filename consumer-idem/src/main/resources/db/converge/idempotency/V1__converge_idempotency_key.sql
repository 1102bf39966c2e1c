-- Converge Idempotency-Key schema, version 1 (module consumer-idem, applied as Migrations "idempotency").

-- One row per (tenant, Idempotency-Key) an HTTP client has sent. The claim is inserted
-- (INSERT ... ON CONFLICT DO NOTHING) and committed before the handler runs; the response is stored
-- by a second short transaction. lease_owner is a fresh token per claim: every later change is a
-- compare-and-swap on it, so a late owner never overwrites a taker-over's row. Rows are purged in
-- bounded batches once expires_at (claim + TTL, default 24 h) has passed.
CREATE TABLE converge_idempotency_key (
    tenant            VARCHAR(64)   NOT NULL,
    idem_key          VARCHAR(255)  NOT NULL,
    fingerprint       CHAR(64)      NOT NULL,   -- hex SHA-256 of method, path and canonical body
    method            VARCHAR(16)   NOT NULL,
    path              VARCHAR(2048) NOT NULL,
    status            VARCHAR(16)   NOT NULL,   -- PROCESSING | COMPLETED
    lease_owner       UUID          NOT NULL,
    leased_until      TIMESTAMPTZ   NOT NULL,   -- a PROCESSING row past this may be taken over
    expected_ms       BIGINT        NOT NULL,   -- the endpoint's expected duration, for Retry-After
    claimed_at        TIMESTAMPTZ   NOT NULL,
    expires_at        TIMESTAMPTZ   NOT NULL,
    completed_at      TIMESTAMPTZ,
    response_status   INT,
    response_headers  TEXT,                     -- name=value lines, percent-encoded (whitelisted only)
    response_body     BYTEA,
    PRIMARY KEY (tenant, idem_key)
);
CREATE INDEX converge_idempotency_key_expires_at ON converge_idempotency_key (expires_at);
