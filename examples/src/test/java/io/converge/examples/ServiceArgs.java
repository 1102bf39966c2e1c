package io.converge.examples;

import io.converge.broker.DevPlatform;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.examples.demo.Backend;
import io.converge.examples.demo.Transport;
import java.util.LinkedHashMap;
import java.util.Map;
import org.postgresql.ds.PGSimpleDataSource;

/** The command-line arguments of a service started by a test: the outbox backend, its own schema, a free port. */
public final class ServiceArgs {

  private ServiceArgs() {
  }

  /** The arguments of service {@code service} (its producer group prefix) of run {@code run}, on schema {@code ds}. */
  public static String[] outbox(String service, EmbeddedRocketMQ mq, ConvergePostgres pg, PGSimpleDataSource ds,
      String run) {
    return args(properties(service, mq, pg, ds.getCurrentSchema(), run));
  }

  /** The properties behind {@link #outbox}, on schema {@code schema}, for a test that adds its own. */
  public static Map<String, String> properties(String service, EmbeddedRocketMQ mq, ConvergePostgres pg,
      String schema, String run) {
    Map<String, String> p = new LinkedHashMap<>(
        Transport.properties(DevPlatform.of(mq, pg, null), Backend.OUTBOX, run));
    p.put("spring.datasource.url", pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "currentSchema=" + schema);
    p.put("spring.datasource.username", pg.user());
    p.put("spring.datasource.password", pg.password());
    p.put("server.port", "0");
    p.put("examples.topic-suffix", "-" + run);
    p.put("converge.producer.mode", "outbox");
    p.put("converge.producer.group", service + "-" + run);
    return p;
  }

  /** {@code properties} as {@code --name=value} arguments. */
  public static String[] args(Map<String, String> properties) {
    return properties.entrySet().stream().map(e -> "--" + e.getKey() + "=" + e.getValue()).toArray(String[]::new);
  }
}
