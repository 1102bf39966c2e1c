package io.converge.core.spring;

import io.converge.core.DatabaseWait;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Start-up against a database that is not there yet: every {@code DataSource} bean is waited for
 * ({@link DatabaseWait}, backoff, each wait logged) as soon as it is created, before Flyway,
 * {@code spring.sql.init}, JPA or Converge's migrations use it, up to
 * {@code converge.startup.database-wait} (default 60 s; 0 turns the wait off; at most 1 h). Converge's
 * migrations on that bean wait as long (see {@link DatabaseWait#assignTo}).
 */
@AutoConfiguration
@ConditionalOnClass(name = "javax.sql.DataSource")
class ConvergeStartupAutoConfiguration {

  static final String PROPERTY = "converge.startup.database-wait";

  @Bean
  static BeanPostProcessor convergeDatabaseStartupWait(Environment environment) {
    Duration limit = Binder.get(environment).bind(PROPERTY, Duration.class).orElse(DatabaseWait.DEFAULT_LIMIT);
    DatabaseWait wait = DatabaseWait.upTo(limit, PROPERTY);
    return new BeanPostProcessor() {

      @Override
      public Object postProcessAfterInitialization(Object bean, String name) {
        if (bean instanceof DataSource ds) {
          wait.assignTo(ds); // Converge's migrations on this DataSource wait as long
          if (!wait.limit().isZero()) {
            wait.await(ds, "DataSource bean '" + name + "'");
          }
        }
        return bean;
      }
    };
  }
}
