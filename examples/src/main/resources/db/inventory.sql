CREATE TABLE IF NOT EXISTS stock (
  sku       varchar(64) PRIMARY KEY,
  available bigint      NOT NULL CHECK (available >= 0),
  reserved  bigint      NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  sold      bigint      NOT NULL DEFAULT 0 CHECK (sold >= 0),
  version   bigint      NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS reservation (
  order_id  varchar(64) PRIMARY KEY,
  sku       varchar(64) NOT NULL REFERENCES stock (sku),
  quantity  integer     NOT NULL CHECK (quantity > 0),
  state     varchar(16) NOT NULL,
  version   bigint      NOT NULL DEFAULT 0
);
