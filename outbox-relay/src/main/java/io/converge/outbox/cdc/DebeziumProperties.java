package io.converge.outbox.cdc;

import java.net.URI;
import java.util.Properties;

/** The Debezium engine configuration of a {@link CdcRelay}. */
final class DebeziumProperties {

  private DebeziumProperties() {
  }

  static Properties of(CdcSettings settings, String slot) {
    URI u = URI.create(settings.jdbcUrl().substring("jdbc:".length()));
    Properties p = new Properties();
    p.setProperty("name", slot);
    p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    p.setProperty("offset.storage", JdbcOffsetStore.class.getName());
    p.setProperty("offset.flush.interval.ms", Long.toString(settings.offsetFlushInterval().toMillis()));
    p.setProperty(JdbcOffsetStore.URL, settings.jdbcUrl());
    p.setProperty(JdbcOffsetStore.USER, nullToEmpty(settings.user()));
    p.setProperty(JdbcOffsetStore.PASSWORD, nullToEmpty(settings.password()));
    p.setProperty(JdbcOffsetStore.SCHEMA, settings.schema());
    p.setProperty(JdbcOffsetStore.NAME, settings.name());
    p.setProperty("database.hostname", u.getHost());
    p.setProperty("database.port", Integer.toString(u.getPort() > 0 ? u.getPort() : 5432));
    p.setProperty("database.dbname", u.getPath().replaceFirst("^/", ""));
    p.setProperty("database.user", nullToEmpty(settings.user()));
    p.setProperty("database.password", nullToEmpty(settings.password()));
    p.setProperty("topic.prefix", slot);
    p.setProperty("plugin.name", "pgoutput");
    p.setProperty("slot.name", slot);
    p.setProperty("slot.drop.on.stop", "false");
    p.setProperty("publication.name", slot);
    p.setProperty("publication.autocreate.mode", "disabled");
    p.setProperty("table.include.list",
        settings.schema() + ".converge_outbox," + settings.schema() + ".converge_cdc_heartbeat");
    // rows committed before the slot are the sweeper's: no snapshot
    p.setProperty("snapshot.mode", "no_data");
    // the slot confirms its position also when only other tables change (else it holds WAL): PostgreSQL
    // sends nothing for transactions without a published change, so each heartbeat writes one
    p.setProperty("heartbeat.interval.ms", Long.toString(settings.heartbeatInterval().toMillis()));
    String beats = settings.schema() + ".converge_cdc_heartbeat";
    p.setProperty("heartbeat.action.query",
        "WITH gone AS (DELETE FROM " + beats + " WHERE relay_name = '" + settings.name()
            + "') INSERT INTO " + beats + " (relay_name) VALUES ('" + settings.name() + "')");
    // a failure ends the engine: the relay restarts it with its own backoff (visible in health and metrics)
    p.setProperty("errors.max.retries", "0");
    p.setProperty("binary.handling.mode", "bytes");
    p.setProperty("tombstones.on.delete", "false");
    p.setProperty("record.processing.threads", "1");
    p.setProperty("record.processing.order", "ORDERED");
    return p;
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
