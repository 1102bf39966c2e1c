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
