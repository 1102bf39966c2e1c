package io.converge.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.examples.ServiceArgs;
import io.converge.examples.order.OrderServiceApp;
import java.time.Duration;
import java.util.ArrayList;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Issue 19.3: the order service (Hikari, {@code spring.sql.init}, JPA, Converge's producer, consumer and
 * Idempotency-Key migrations) started while its PostgreSQL is frozen, which stays frozen 4 s after the
 * service's first connection attempt (more than three times its pool's connection timeout, shortened to
 * 1.25 s), waits for the database and starts.
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class ServiceStartupIT {

  @Test
  void orderServiceStartedWhileTheDatabaseIsFrozenStartsOnceItIsBack(EmbeddedRocketMQ mq, ConvergePostgres pg)
      throws Exception {
    List<String> args = orderServiceArgs(mq, pg);
    // the waits are logged (Spring Boot resets logback at start, so they are seen in the output, and
    // asserted in ConvergeStartupAutoConfigurationIT); the next test shows that without them the start fails
    CompletableFuture<ConfigurableApplicationContext> started = null;
    try {
      started = startWhileFrozen(pg, args);
      try (ConfigurableApplicationContext ctx = started.get(3, TimeUnit.MINUTES)) {
        assertThat(ctx.isActive()).isTrue();
        // the demo's counts read each event once, although the actuator puts a meter in several registry beans
        ctx.getBean(MeterRegistry.class).counter("converge.probe").increment();
        assertThat(SagaServices.counter(List.of(ctx), "converge.probe")).isEqualTo(1.0);
      }
    } finally {
      pg.thaw();
      closeWhenStarted(started);
    }
  }

  /** What happened before issue 19.3, and what {@code converge.startup.database-wait=0} still does. */
  @Test
  void withoutTheWaitTheStartFails(EmbeddedRocketMQ mq, ConvergePostgres pg) throws Exception {
    List<String> args = new ArrayList<>(orderServiceArgs(mq, pg));
    args.add("--converge.startup.database-wait=0");
    CompletableFuture<ConfigurableApplicationContext> started = null;
    try {
      started = startWhileFrozen(pg, args);
      CompletableFuture<ConfigurableApplicationContext> start = started;
      assertThatThrownBy(() -> start.get(3, TimeUnit.MINUTES)).hasStackTraceContaining("Connection");
    } finally {
      pg.thaw();
      closeWhenStarted(started);
    }
  }

  /**
   * Freezes {@code pg}, starts the order service in the background, and thaws {@code pg} once the
   * service has opened a connection to it and {@link #FROZEN_AFTER_CONNECT} has passed (more than two
   * pool timeouts): a busy machine may take long to reach the database, so the freeze follows the start.
   */
  private static CompletableFuture<ConfigurableApplicationContext> startWhileFrozen(ConvergePostgres pg,
      List<String> args)
      throws Exception {
    int port = Integer.parseInt(pg.jdbcUrl().replaceAll(".*:(\\d+)/.*", "$1"));
    pg.freeze();
    long before = connectionsTo(port);
    CompletableFuture<ConfigurableApplicationContext> started = CompletableFuture
        .supplyAsync(() -> new SpringApplicationBuilder(OrderServiceApp.class).properties("spring.config.name=order")
            .run(args.toArray(String[]::new)));
    await("the service opened a connection to the frozen database within 2 min").atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(100)).until(() -> connectionsTo(port) > before || started.isDone());
    Thread.sleep(FROZEN_AFTER_CONNECT.toMillis()); // the outage itself, not a synchronisation
    pg.thaw();
    return started;
  }

  /**
   * A service left running would share the consumer groups of the demo's later runs in this JVM (their
   * names carry no run suffix) and take their messages: close it, whenever it starts.
   */
  private static void closeWhenStarted(CompletableFuture<ConfigurableApplicationContext> started) {
    if (started != null) {
      started.whenComplete((ctx, e) -> {
        if (ctx != null) {
          ctx.close();
        }
      });
    }
  }

  private static final java.time.Duration FROZEN_AFTER_CONNECT = java.time.Duration.ofSeconds(4);

  /**
   * Established TCP connections of this machine to {@code port}, from /proc/net/tcp and tcp6 (a Java
   * socket to an IPv4 address is usually a dual-stack IPv6 one).
   */
  private static long connectionsTo(int port) throws java.io.IOException {
    String remote = String.format(":%04X ", port);
    long n = 0;
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      n += java.nio.file.Files.readAllLines(java.nio.file.Path.of(table)).stream().skip(1)
          .map(String::trim).map(l -> l.split("\\s+"))
          .filter(f -> f.length > 3 && (f[2] + " ").endsWith(remote) && f[3].equals("01"))
          .count();
    }
    return n;
  }

  private static List<String> orderServiceArgs(EmbeddedRocketMQ mq, ConvergePostgres pg) {
    String run = "startup-" + UUID.randomUUID().toString().substring(0, 6);
    String schema = ((PGSimpleDataSource) pg.newSchema("order_" + run.replace('-', '_'))).getCurrentSchema();
    Map<String, String> p = ServiceArgs.properties("order", mq, pg, schema, run);
    p.putAll(Outages.SHORT_POOL_TIMEOUT);
    // pgjdbc's own default login timeout is none: a login to a frozen server would hang until it thaws
    p.put("spring.datasource.hikari.data-source-properties.loginTimeout", "1");
    return List.of(ServiceArgs.args(p));
  }
}
