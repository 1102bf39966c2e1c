CREATE TABLE IF NOT EXISTS reservation (order_id text NOT NULL, message_id text NOT NULL, order_json jsonb NOT NULL,
  reserved_at timestamptz NOT NULL DEFAULT now());
