package io.converge.ops.bench.peer;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.BenchOrders;
import io.converge.ops.bench.NamedScenario;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.DeferredImportSelector;
import org.springframework.context.annotation.Import;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.core.task.TaskExecutor;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.transaction.annotation.Transactional;

/**
 * Peer {@code modulith-outbox-write}: what a Spring team would use instead of Converge's outbox (compare
 * {@code outbox-write} with it). Spring Modulith's JDBC event publication registry, set up by its own
 * auto-configuration (table {@code event_publication} created by its schema initialization, events serialized by
 * its Jackson serializer): a {@code @Transactional} service method inserts the same one-row order and publishes an
 * event of a 1 KiB payload, which the registry stores in the same transaction for the one
 * {@link ApplicationModuleListener} that listens to it. As {@code outbox-write} runs no relay, the listener's
 * asynchronous execution is not run here (its executor drops it): the publication stays incomplete, exactly as an
 * outbox row waits for its relay. What is timed is the write a request pays. Thread-safe.
 */
public final class ModulithOutboxWrite extends NamedScenario {

  /** The event: the order and a payload of the size of the other write scenarios' messages. */
  public record OrderPlaced(long id, String customer, String payload) {
  }

  private static final String PAYLOAD = "x".repeat(1024);

  private final AtomicLong ids = new AtomicLong();
  private ConfigurableApplicationContext context;
  private DataSource pool;
  private Orders orders;

  /** The {@code modulith-outbox-write} scenario. */
  public ModulithOutboxWrite() {
    super("modulith-outbox-write", "unit");
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    pool = env.newPool("bench_modulith", threads + 2);
    BenchOrders.create(pool);
    context = new SpringApplicationBuilder(Registry.class)
        .web(WebApplicationType.NONE)
        .bannerMode(Banner.Mode.OFF)
        .logStartupInfo(false)
        .registerShutdownHook(false)
        .initializers(c -> c.getBeanFactory().registerSingleton("dataSource", pool))
        .properties("spring.modulith.events.jdbc.schema-initialization.enabled=true")
        .run();
    orders = context.getBean(Orders.class);
  }

  @Override
  public int runOnce(int worker) {
    orders.place(ids.incrementAndGet(), "customer-" + worker);
    return 1;
  }

  /** The publications stored so far (each one waits for its listener, as an outbox row for its relay). */
  long publications() throws SQLException {
    return new JdbcTemplate(pool).queryForObject("SELECT count(*) FROM event_publication WHERE completion_date IS NULL",
        Long.class);
  }

  /** The business rows committed so far. */
  long orders() throws SQLException {
    return BenchOrders.count(pool);
  }

  @Override
  public void close() {
    if (context != null) {
      context.close();
    }
  }

  /** The application: Spring Modulith's registry on JDBC, by its own auto-configuration. */
  @SpringBootConfiguration(proxyBeanMethods = false)
  @Import(AutoConfigurations.class)
  @EnableAsync
  static class Registry {

    @Bean
    Orders orders(JdbcTemplate jdbc, ApplicationEventPublisher events) {
      return new Orders(jdbc, events);
    }

    @Bean
    Shipping shipping() {
      return new Shipping();
    }

    /** The asynchronous listeners' executor: drops them (no relay in a write scenario). */
    @Bean
    TaskExecutor taskExecutor() {
      return task -> {
      };
    }
  }

  /**
   * The auto-configurations the registry needs, in their order, and no other (the bench's class path holds the
   * examples' whole Spring Boot stack). Deferred, as Spring Boot imports auto-configurations: after the
   * application's beans. By name: Spring Modulith's are not public.
   */
  static final class AutoConfigurations implements DeferredImportSelector {

    @Override
    public String[] selectImports(AnnotationMetadata metadata) {
      return new String[]{
          "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
          "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
          "org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration",
          "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
          "org.springframework.modulith.events.jackson.JacksonEventSerializationConfiguration",
          "org.springframework.modulith.events.jdbc.JdbcEventPublicationAutoConfiguration",
          // after the repository: its registry is conditional on one
          "org.springframework.modulith.events.config.EventPublicationAutoConfiguration"};
    }
  }

  /** The service: the order and its event in one transaction. */
  public static class Orders {

    private final JdbcTemplate jdbc;
    private final ApplicationEventPublisher events;

    Orders(JdbcTemplate jdbc, ApplicationEventPublisher events) {
      this.jdbc = jdbc;
      this.events = events;
    }

    /** Inserts the order and publishes its event. */
    @Transactional
    public void place(long id, String customer) {
      jdbc.update("INSERT INTO bench_orders (id, customer, amount_cents) VALUES (?, ?, ?)", id, customer, 1999L);
      events.publishEvent(new OrderPlaced(id, customer, PAYLOAD));
    }
  }

  /** The listener whose publication the registry stores. */
  public static class Shipping {

    /** Would ship the order. */
    @ApplicationModuleListener
    public void on(OrderPlaced event) {
      // never run in the scenario: its executor drops it
    }
  }
}
