package io.converge.examples.demo;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.examples.account.AccountServiceApp;
import io.converge.examples.events.Topics;
import io.converge.examples.inventory.InventoryServiceApp;
import io.converge.examples.notification.NotificationServiceApp;
import io.converge.examples.order.OrderServiceApp;
import io.converge.examples.payment.PaymentServiceApp;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The five services of the saga started in this JVM, each its own Spring Boot application with its
 * own schema (as separate services have separate databases), on one backend. Closing stops them in
 * reverse order.
 */
final class SagaServices implements AutoCloseable {

  /** A service: its name (config file and schema prefix) and its application class. */
  private record Service(String name, Class<?> app) {
  }

  private static final List<Service> SERVICES = List.of(
      new Service("notification", NotificationServiceApp.class),
      new Service("account", AccountServiceApp.class),
      new Service("inventory", InventoryServiceApp.class),
      new Service("order", OrderServiceApp.class),
      new Service("payment", PaymentServiceApp.class));

  private final Map<String, ConfigurableApplicationContext> contexts = new LinkedHashMap<>();
  private final Map<String, DataSource> databases = new LinkedHashMap<>();
  private final Topics topics;

  private SagaServices(Topics topics) {
    this.topics = topics;
  }

  /**
   * Starts every service on {@code backend}: schemas in {@code pg}, topics suffixed with {@code run}.
   *
   * @param transport the broker properties of the backend ({@code converge.*})
   */
  static SagaServices start(Backend backend, ConvergePostgres pg, String run, Map<String, String> transport) {
    return start(backend, pg, run, transport, false);
  }

  /**
   * As {@link #start(Backend, ConvergePostgres, String, Map)}; with {@code fixedPorts} the web services
   * listen on the ports of their configuration files (order 8081, payment 8085) instead of free ones.
   */
  static SagaServices start(Backend backend, ConvergePostgres pg, String run, Map<String, String> transport,
      boolean fixedPorts) {
    SagaServices s = new SagaServices(new Topics("-" + run));
    try {
      for (Service svc : SERVICES) {
        DataSource db = pg.newSchema(svc.name() + "_" + run.replace('-', '_'));
        String schema = ((PGSimpleDataSource) db).getCurrentSchema();
        s.databases.put(svc.name(), db);
        Map<String, String> p = new LinkedHashMap<>(transport);
        p.put("spring.datasource.url",
            pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "currentSchema=" + schema);
        p.put("spring.datasource.username", pg.user());
        p.put("spring.datasource.password", pg.password());
        if (!fixedPorts) {
          p.put("server.port", "0");
        }
        p.put("examples.topic-suffix", s.topics.suffix());
        p.put("converge.producer.mode", backend.mode());
        p.put("converge.producer.group", svc.name() + "-" + run);
        List<String> args = new ArrayList<>();
        p.forEach((k, v) -> args.add("--" + k + "=" + v));
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(svc.app())
            .properties("spring.config.name=" + svc.name())
            .run(args.toArray(String[]::new));
        s.contexts.put(svc.name(), ctx);
      }
      return s;
    } catch (RuntimeException e) {
      s.close();
      throw e;
    }
  }

  /** The topic names of this run. */
  Topics topics() {
    return topics;
  }

  /** The database of service {@code name}. */
  DataSource db(String name) {
    return databases.get(name);
  }

  /** The HTTP port of service {@code name}. */
  int port(String name) {
    return Integer.parseInt(contexts.get(name).getEnvironment().getRequiredProperty("local.server.port"));
  }

  /** The sum over all services of Converge's {@code consumer.<what>} counters, e.g. {@code duplicates}. */
  long consumerCount(String what) {
    double sum = 0;
    for (ConfigurableApplicationContext ctx : contexts.values()) {
      for (MeterRegistry r : ctx.getBeansOfType(MeterRegistry.class).values()) {
        sum += r.find("consumer." + what).counters().stream().mapToDouble(Counter::count).sum();
      }
    }
    return Math.round(sum);
  }

  @Override
  public void close() {
    List<ConfigurableApplicationContext> reverse = new ArrayList<>(contexts.values());
    java.util.Collections.reverse(reverse);
    for (ConfigurableApplicationContext ctx : reverse) {
      ctx.close();
    }
    contexts.clear();
  }
}
