CREATE TABLE IF NOT EXISTS charge (
  id             varchar(64) PRIMARY KEY,
  merchant_id    varchar(64) NOT NULL,
  out_trade_no   varchar(64) NOT NULL,
  amount_cents   bigint      NOT NULL CHECK (amount_cents > 0),
  currency       char(3)     NOT NULL,
  state          varchar(16) NOT NULL,
  failure_reason varchar(200),
  version        bigint      NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (merchant_id, out_trade_no)
);
CREATE TABLE IF NOT EXISTS refund (
  id            varchar(64) PRIMARY KEY,
  charge_id     varchar(64) NOT NULL REFERENCES charge (id),
  out_refund_no varchar(64) NOT NULL,
  amount_cents  bigint      NOT NULL CHECK (amount_cents > 0),
  state         varchar(16) NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (charge_id, out_refund_no)
);
-- the payment provider's callbacks (POST /charges/{id}/provider-callback): one row per run of the handler, no unique
-- event id on purpose, so that the demo's reconciliation sees a copy that ran twice; the signed-callback filter runs
-- each callback once
ALTER TABLE charge ADD COLUMN IF NOT EXISTS provider_status varchar(16);
CREATE TABLE IF NOT EXISTS provider_callback (
  id          bigserial   PRIMARY KEY,
  charge_id   varchar(64) NOT NULL REFERENCES charge (id),
  event_id    varchar(64) NOT NULL,
  outcome     varchar(16) NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
