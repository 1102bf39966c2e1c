CREATE TABLE IF NOT EXISTS notification (
  order_id    varchar(64)  PRIMARY KEY,
  customer_id varchar(64)  NOT NULL,
  text        varchar(500) NOT NULL,
  sent_at     timestamptz  NOT NULL
);
