package io.converge.examples.demo;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.examples.account.AccountServiceApp;
import io.converge.examples.inventory.InventoryServiceApp;
import io.converge.examples.notification.NotificationServiceApp;
import io.converge.examples.order.OrderServiceApp;
import io.converge.examples.payment.PaymentServiceApp;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.ArrayList;
import java.util.Collection;
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
final class SagaServices extends RunServices {

  /** A service: its name (config file and schema prefix) and its application class. */
  record Service(String name, Class<?> app) {
  }

  static final List<Service> SERVICES = List.of(
      new Service("notification", NotificationServiceApp.class),
      new Service("account", AccountServiceApp.class),
      new Service("inventory", InventoryServiceApp.class),
      new Service("order", OrderServiceApp.class),
      new Service("payment", PaymentServiceApp.class));

  private final Map<String, ConfigurableApplicationContext> contexts = new LinkedHashMap<>();

  private SagaServices(String run) {
    super(run);
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
    return start(backend, pg, run, transport, fixedPorts, null);
  }

  /**
   * As {@link #start(Backend, ConvergePostgres, String, Map, boolean)}; with {@code spans} every service traces into it
   * (its own SDK, its name as {@code service.name}; see {@code ServiceTracing}), which closing the services leaves open.
   */
  static SagaServices start(Backend backend, ConvergePostgres pg, String run, Map<String, String> transport,
      boolean fixedPorts, SpanExporter spans) {
    SagaServices s = new SagaServices(run);
    try {
      for (Service svc : SERVICES) {
        DataSource db = s.newSchema(pg, svc.name());
        Map<String, String> p = properties(svc.name(), backend, pg, pg.jdbcUrl(), db, run, transport);
        if (!fixedPorts) {
          p.put("server.port", "0");
        }
        s.contexts.put(svc.name(), run(svc.name(), p, spans));
      }
      return s;
    } catch (RuntimeException e) {
      s.close();
      throw e;
    }
  }

  /**
   * The properties of service {@code name} of run {@code run} on {@code backend}: {@code transport}, its
   * database {@code db} (a schema of {@code pg}) reached at {@code jdbcUrl} (the server's, or a proxy's), its
   * topics, backend and producer group.
   */
  static Map<String, String> properties(String name, Backend backend, ConvergePostgres pg, String jdbcUrl,
      DataSource db, String run, Map<String, String> transport) {
    String schema = ((PGSimpleDataSource) db).getCurrentSchema();
    Map<String, String> p = new LinkedHashMap<>(transport);
    p.put("spring.datasource.url", jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + "currentSchema=" + schema);
    p.put("spring.datasource.username", pg.user());
    p.put("spring.datasource.password", pg.password());
    p.put("examples.topic-suffix", "-" + run);
    p.put("converge.producer.mode", backend.mode());
    p.put("converge.producer.group", name + "-" + run);
    return p;
  }

  /** Starts service {@code name} in this JVM with properties {@code p}. */
  static ConfigurableApplicationContext run(String name, Map<String, String> p) {
    return run(name, p, null);
  }

  /** As {@link #run(String, Map)}; with {@code spans} (when not null) the service traces into it. */
  static ConfigurableApplicationContext run(String name, Map<String, String> p, SpanExporter spans) {
    Service svc = SERVICES.stream().filter(s -> s.name().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no service " + name + ", but one of " + SERVICES));
    List<String> args = new ArrayList<>();
    p.forEach((k, v) -> args.add("--" + k + "=" + v));
    SpringApplicationBuilder app = new SpringApplicationBuilder(svc.app())
        .properties("spring.config.name=" + svc.name());
    if (spans != null) {
      app.initializers(ctx -> ctx.getBeanFactory().registerSingleton("serviceSpanExporter", new Shared(spans)));
    }
    return app.run(args.toArray(String[]::new));
  }

  /** {@code spans}, left open when a service's SDK shuts down: the services of a run share it. */
  private record Shared(SpanExporter spans) implements SpanExporter {

    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
      return spans.export(batch);
    }

    @Override
    public CompletableResultCode flush() {
      return spans.flush();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }

  /** The sum over {@code contexts} of the counters named {@code name}, each counted once (see {@link #meters}). */
  static double counter(Iterable<ConfigurableApplicationContext> contexts, String name) {
    double sum = 0;
    for (ConfigurableApplicationContext ctx : contexts) {
      sum += meters(ctx).find(name).counters().stream().mapToDouble(Counter::count).sum();
    }
    return sum;
  }

  /**
   * A service's registry: the primary one. With the actuator, Spring Boot adds a Prometheus registry next to the
   * services' own and a primary composite over both, so a meter is in three registry beans; summing over every bean
   * counted each event three times (and a check such as "every injected duplicate absorbed" could not fail).
   */
  static MeterRegistry meters(ConfigurableApplicationContext ctx) {
    return ctx.getBean(MeterRegistry.class);
  }

  @Override
  public int port(String name) {
    return Integer.parseInt(contexts.get(name).getEnvironment().getRequiredProperty("local.server.port"));
  }

  /** The sum over all services of Converge's {@code consumer.<what>} counters, e.g. {@code duplicates}. */
  @Override
  public long consumerCount(String what) {
    return Math.round(counter(contexts.values(), "consumer." + what));
  }

  /**
   * Closes the services at once, each on its own thread: they share nothing but the broker and the database server,
   * and each close waits for its own consumers and clients (a Pulsar client alone takes about 2 s to shut its event
   * loops down), so closing them one after another cost the sum of those waits.
   */
  @Override
  public void close() {
    List<Thread> closing = new ArrayList<>();
    List<RuntimeException> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    for (Map.Entry<String, ConfigurableApplicationContext> e : contexts.entrySet()) {
      Thread t = new Thread(() -> {
        try {
          e.getValue().close();
        } catch (RuntimeException failure) {
          failures.add(failure);
        }
      }, "close-" + e.getKey());
      t.start();
      closing.add(t);
    }
    boolean interrupted = false;
    for (Thread t : closing) {
      while (true) {
        try {
          t.join();
          break;
        } catch (InterruptedException ie) {
          interrupted = true;
        }
      }
    }
    contexts.clear();
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (!failures.isEmpty()) {
      RuntimeException first = failures.get(0);
      failures.stream().skip(1).forEach(first::addSuppressed);
      throw first;
    }
  }
}
