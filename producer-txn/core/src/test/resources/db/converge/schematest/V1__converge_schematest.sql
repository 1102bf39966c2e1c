-- A migration used only by MigrationsIT.
CREATE TABLE converge_schematest (
  id bigint PRIMARY KEY,
  note text NOT NULL
);
