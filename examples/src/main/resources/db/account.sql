CREATE TABLE IF NOT EXISTS account (
  customer_id   varchar(64) PRIMARY KEY,
  balance_cents bigint      NOT NULL CHECK (balance_cents >= 0),
  version       bigint      NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS account_entry (
  order_id     varchar(64) PRIMARY KEY,
  customer_id  varchar(64) NOT NULL REFERENCES account (customer_id),
  amount_cents bigint      NOT NULL CHECK (amount_cents > 0),
  created_at   timestamptz NOT NULL
);
