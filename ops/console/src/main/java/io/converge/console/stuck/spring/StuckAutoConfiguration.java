package io.converge.console.stuck.spring;

import io.converge.console.inspect.Inspector;
import io.converge.console.stuck.StuckGauges;
import io.converge.console.stuck.StuckWebhook;
import io.converge.core.Migrations;
import io.micrometer.core.instrument.MeterRegistry;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Spring Boot auto-configuration of the stuck alerts: with a {@link DataSource} and a {@link MeterRegistry}
 * (Spring Boot's actuator), {@link StuckGauges} on that data source registers {@code converge.stuck{kind}} and
 * refreshes it every {@code converge.stuck.refresh-interval}, with the thresholds of
 * {@code converge.stuck.thresholds.*}; with {@code converge.stuck.webhook.url}, a {@link StuckWebhook} too (its
 * table migrated unless {@code converge.stuck.webhook.migrate=false}). Off with {@code converge.stuck.enabled=false};
 * backs off when the application defines its own {@link StuckGauges}.
 */
@AutoConfiguration(afterName = {"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({DataSource.class, MeterRegistry.class})
@ConditionalOnProperty(prefix = "converge.stuck", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(StuckProperties.class)
class StuckAutoConfiguration {

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  StuckGauges convergeStuckGauges(DataSource dataSource, MeterRegistry registry, StuckProperties properties) {
    StuckGauges.Builder gauges = StuckGauges.builder()
        .inspector(Inspector.of(dataSource, properties.stuckThresholds())).registry(registry)
        .refreshInterval(properties.refreshInterval());
    StuckProperties.Webhook w = properties.webhook();
    if (w != null && w.url() != null) {
      if (w.migrate()) {
        Migrations.apply(dataSource, "stuck");
      }
      gauges.webhook(StuckWebhook.builder().dataSource(dataSource).url(w.url()).timeout(w.timeout())
          .maxAttempts(w.maxAttempts()).retry(w.retryBase(), w.retryMax()).build());
    }
    return gauges.build().start();
  }
}
