CREATE INDEX converge_schematest_note ON converge_schematest (note);
