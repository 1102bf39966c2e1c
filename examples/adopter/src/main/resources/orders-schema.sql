CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY, sku text NOT NULL, quantity int NOT NULL);
