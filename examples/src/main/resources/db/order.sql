CREATE TABLE IF NOT EXISTS orders (
  id               varchar(64)  PRIMARY KEY,
  customer_id      varchar(64)  NOT NULL,
  sku              varchar(64)  NOT NULL,
  quantity         integer      NOT NULL CHECK (quantity > 0),
  amount_cents     bigint       NOT NULL CHECK (amount_cents > 0),
  state            varchar(16)  NOT NULL,
  cancel_reason    varchar(200),
  created_event_id varchar(64)  NOT NULL UNIQUE,
  created_at       timestamptz  NOT NULL,
  updated_at       timestamptz  NOT NULL,
  version          bigint       NOT NULL DEFAULT 0,
  -- the Idempotency-Key and tenant of the POST /orders that created it (GET /orders?idempotency-key=...)
  idempotency_key  varchar(255),
  tenant           varchar(64)
);
CREATE INDEX IF NOT EXISTS orders_open ON orders (created_at) WHERE state = 'CREATED';
-- a database created before these two columns existed gets them (CREATE TABLE IF NOT EXISTS adds none)
ALTER TABLE orders ADD COLUMN IF NOT EXISTS idempotency_key varchar(255);
ALTER TABLE orders ADD COLUMN IF NOT EXISTS tenant varchar(64);
CREATE INDEX IF NOT EXISTS orders_idempotency_key ON orders (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;
