CREATE TABLE IF NOT EXISTS account (
  customer_id   varchar(64) PRIMARY KEY,
  balance_cents bigint      NOT NULL CHECK (balance_cents >= 0),
  -- the orchestrated flow's TCC debit: what a Try froze and no Confirm or Cancel has settled yet
  frozen_cents  bigint      NOT NULL DEFAULT 0 CHECK (frozen_cents >= 0),
  version       bigint      NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS account_entry (
  order_id     varchar(64) PRIMARY KEY,
  customer_id  varchar(64) NOT NULL REFERENCES account (customer_id),
  amount_cents bigint      NOT NULL CHECK (amount_cents > 0),
  created_at   timestamptz NOT NULL
);
-- one row per order whose debit a TCC Try froze, deleted by its Confirm (debited) or its Cancel (unfrozen)
CREATE TABLE IF NOT EXISTS account_freeze (
  order_id     varchar(64) PRIMARY KEY,
  customer_id  varchar(64) NOT NULL REFERENCES account (customer_id),
  amount_cents bigint      NOT NULL CHECK (amount_cents > 0),
  created_at   timestamptz NOT NULL
);
