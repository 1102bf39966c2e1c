package io.converge.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.converge.examples.order.OrderServiceApp;
import io.converge.producer.schema.DatabaseWait;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.LoggerFactory;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Issue 19.3: the order service (Hikari, {@code spring.sql.init}, JPA, Converge's producer, consumer and
 * Idempotency-Key migrations) started while its PostgreSQL is frozen for 25 s, many times its pool's
 * connection timeout (shortened to 3 s), waits for the database and starts.
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class ServiceStartupIT {

  /** Long enough for the service's start (slow on a busy machine) to reach the database while frozen. */
  private static final int FROZEN_SECONDS = 25;

  @Test
  void orderServiceStartedWhileTheDatabaseIsFrozenStartsOnceItIsBack(EmbeddedRocketMQ mq, ConvergePostgres pg) {
    List<String> args = orderServiceArgs(mq, pg);
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    Logger logger = (Logger) LoggerFactory.getLogger(DatabaseWait.class);
    logger.addAppender(log);
    ScheduledExecutorService thawer = Executors.newSingleThreadScheduledExecutor();
    pg.freeze();
    long t0 = System.nanoTime();
    try {
      thawer.schedule(pg::thaw, FROZEN_SECONDS, TimeUnit.SECONDS);
      try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(OrderServiceApp.class)
          .properties("spring.config.name=order").run(args.toArray(String[]::new))) {
        assertThat(ctx.isActive()).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)).as("it started after the thaw, not before")
            .isGreaterThanOrEqualTo(FROZEN_SECONDS - 1);
      }
    } finally {
      pg.thaw();
      thawer.shutdownNow();
      logger.detachAppender(log);
    }
    assertThat(log.list).map(ILoggingEvent::getFormattedMessage).as("the start met the frozen database and waited")
        .anySatisfy(m -> assertThat(m).contains("waiting for the database for DataSource bean 'dataSource'"));
  }

  /** What happened before issue 19.3, and what {@code converge.startup.database-wait=0} still does. */
  @Test
  void withoutTheWaitTheStartFails(EmbeddedRocketMQ mq, ConvergePostgres pg) {
    List<String> args = new ArrayList<>(orderServiceArgs(mq, pg));
    args.add("--converge.startup.database-wait=0");
    ScheduledExecutorService thawer = Executors.newSingleThreadScheduledExecutor();
    pg.freeze();
    try {
      thawer.schedule(pg::thaw, FROZEN_SECONDS, TimeUnit.SECONDS);
      assertThatThrownBy(() -> new SpringApplicationBuilder(OrderServiceApp.class).properties("spring.config.name=order")
          .run(args.toArray(String[]::new)).close())
          .hasStackTraceContaining("Connection");
    } finally {
      pg.thaw();
      thawer.shutdownNow();
    }
  }

  private static List<String> orderServiceArgs(EmbeddedRocketMQ mq, ConvergePostgres pg) {
    DemoPlatform platform = DemoPlatform.of(mq, pg, null);
    String run = "startup-" + UUID.randomUUID().toString().substring(0, 6);
    Map<String, String> p = new LinkedHashMap<>(platform.transport(Backend.OUTBOX, run));
    String schema = ((PGSimpleDataSource) pg.newSchema("order_" + run.replace('-', '_'))).getCurrentSchema();
    p.put("spring.datasource.url", pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "currentSchema=" + schema);
    p.put("spring.datasource.username", pg.user());
    p.put("spring.datasource.password", pg.password());
    p.put("spring.datasource.hikari.connection-timeout", "3000");
    p.put("spring.datasource.hikari.validation-timeout", "1000");
    p.put("server.port", "0");
    p.put("examples.topic-suffix", "-" + run);
    p.put("converge.producer.mode", "outbox");
    p.put("converge.producer.group", "order-" + run);
    List<String> args = new ArrayList<>();
    p.forEach((k, v) -> args.add("--" + k + "=" + v));
    return args;
  }
}
