package io.converge.core.spring;

import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.DatabaseWait;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code converge.startup.database-wait}: a Spring application started while its PostgreSQL is frozen
 * (SIGSTOP, longer than the data source's login timeout) waits for it and starts; one whose database
 * does not come back within the limit fails naming the limit; a bad limit is refused with its value.
 */
class ConvergeStartupAutoConfigurationIT {

  private static final ConvergePostgres PG = ConvergePostgres.shared();

  private static ApplicationContextRunner runner(int loginTimeoutSeconds) {
    PGSimpleDataSource db = (PGSimpleDataSource) PG.newSchema("startup");
    db.setLoginTimeout(loginTimeoutSeconds);
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(ConvergeStartupAutoConfiguration.class))
        .withBean("dataSource", DataSource.class, () -> db);
  }

  @Test
  void startsOnceTheFrozenDatabaseIsBackAndLogsTheWaits() {
    ApplicationContextRunner runner = runner(2);
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    Logger logger = (Logger) LoggerFactory.getLogger(DatabaseWait.class);
    logger.addAppender(log);
    PG.freeze();
    // thawed once the first wait is logged (a login timed out against the frozen server), not after a fixed time
    CompletableFuture<Void> thawer = CompletableFuture.runAsync(() -> {
      await("the first wait logged").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
          .until(() -> {
            synchronized (log) { // the appender appends under its own lock
              return log.list.stream().anyMatch(e -> e.getFormattedMessage().contains("(attempt 1, next in"));
            }
          });
      PG.thaw();
    });
    try {
      runner.run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(DataSource.class));
    } finally {
      PG.thaw();
      thawer.cancel(true);
      logger.detachAppender(log);
    }
    assertThat(log.list).map(ILoggingEvent::getFormattedMessage)
        .anySatisfy(m -> assertThat(m).contains("waiting for the database for DataSource bean 'dataSource'",
            "(attempt 1, next in",
            "converge.startup.database-wait=60s"));
  }

  @Test
  void failsNamingTheLimitWhenTheDatabaseStaysFrozen() {
    ApplicationContextRunner runner = runner(1).withPropertyValues("converge.startup.database-wait=3s");
    PG.freeze();
    try {
      runner.run(ctx -> assertThat(ctx).hasFailed().getFailure()
          .hasStackTraceContaining(DatabaseUnavailableException.class.getName())
          .hasStackTraceContaining("within converge.startup.database-wait=3s"));
    } finally {
      PG.thaw();
    }
  }

  @Test
  void aNegativeLimitIsRefusedWithItsValue() {
    runner(2).withPropertyValues("converge.startup.database-wait=-5s")
        .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .hasMessageContaining("converge.startup.database-wait must be between 0 and 1h, but was PT-5S"));
  }
}
