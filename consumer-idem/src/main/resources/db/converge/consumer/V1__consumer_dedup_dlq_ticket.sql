-- Converge consumer-idem schema, version 1.

-- One row per (tenant, consumer group, message id) that a consumer has finished with, whatever the
-- outcome. The row is inserted (INSERT ... ON CONFLICT DO NOTHING) in the same transaction as the
-- handler's writes, so "claimed" and "handled" are one fact. Rows are purged in bounded batches
-- after the retention (default 7 days, never under 6 hours: longer than RocketMQ's ~4h46m of
-- redeliveries).
CREATE TABLE converge_dedup (
    tenant          VARCHAR(64)  NOT NULL,
    consumer_group  VARCHAR(128) NOT NULL,
    message_id      VARCHAR(200) NOT NULL,
    outcome         VARCHAR(24)  NOT NULL,   -- PROCESSED | BUSINESS_FAILURE | DEAD_LETTERED | TICKETED
    detail          TEXT,
    topic           VARCHAR(255) NOT NULL,
    processed_at    TIMESTAMPTZ  NOT NULL,
    PRIMARY KEY (tenant, consumer_group, message_id)
);
CREATE INDEX converge_dedup_processed_at ON converge_dedup (processed_at);

-- Failed attempts of a message, kept outside the rolled-back handler transaction so that the count
-- survives redeliveries, restarts and other instances. Deleted when the message reaches an outcome.
CREATE TABLE converge_consumer_attempt (
    tenant          VARCHAR(64)  NOT NULL,
    consumer_group  VARCHAR(128) NOT NULL,
    message_id      VARCHAR(200) NOT NULL,
    attempts        INT          NOT NULL,
    last_error      TEXT,
    first_failed_at TIMESTAMPTZ  NOT NULL,
    last_failed_at  TIMESTAMPTZ  NOT NULL,
    PRIMARY KEY (tenant, consumer_group, message_id)
);

-- Messages a consumer gave up on: after N technical failures, a money anomaly, or no usable id.
-- The full message is kept so that ops can read it and resume it.
CREATE TABLE converge_dlq (
    id                BIGSERIAL    PRIMARY KEY,
    tenant            VARCHAR(64)  NOT NULL,
    consumer_group    VARCHAR(128) NOT NULL,
    topic             VARCHAR(255) NOT NULL,
    message_id        VARCHAR(200),            -- null when the message had no usable id
    broker_message_id VARCHAR(128),
    reason_code       VARCHAR(32)  NOT NULL,   -- RETRIES_EXHAUSTED | MONEY_ANOMALY | MISSING_MESSAGE_ID
    reason            TEXT         NOT NULL,
    attempts          INT          NOT NULL,
    headers           TEXT         NOT NULL,   -- name=value lines, percent-encoded
    payload           BYTEA        NOT NULL,
    status            VARCHAR(16)  NOT NULL,   -- PARKED | RESUMED | DISCARDED
    created_at        TIMESTAMPTZ  NOT NULL,
    resolved_at       TIMESTAMPTZ
);
CREATE INDEX converge_dlq_parked ON converge_dlq (consumer_group, created_at) WHERE status = 'PARKED';

-- Manual work for a person (the article's suspense account, 差错户): money anomalies and messages
-- dead-lettered after N attempts. Never closed automatically.
CREATE TABLE converge_ticket (
    id              BIGSERIAL    PRIMARY KEY,
    tenant          VARCHAR(64)  NOT NULL,
    consumer_group  VARCHAR(128) NOT NULL,
    topic           VARCHAR(255) NOT NULL,
    message_id      VARCHAR(200),
    dlq_id          BIGINT       REFERENCES converge_dlq (id),
    kind            VARCHAR(24)  NOT NULL,     -- MONEY_ANOMALY | RETRIES_EXHAUSTED
    reason          TEXT         NOT NULL,
    status          VARCHAR(16)  NOT NULL,     -- OPEN | RESOLVED
    created_at      TIMESTAMPTZ  NOT NULL,
    resolved_at     TIMESTAMPTZ,
    resolved_by     VARCHAR(128),
    resolution      TEXT
);
CREATE INDEX converge_ticket_open ON converge_ticket (created_at) WHERE status = 'OPEN';
