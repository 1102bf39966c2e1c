package io.converge.consumer.spring;

import io.converge.consumer.http.IdempotencyFilter;
import io.converge.consumer.http.IdempotencyKeyPurger;
import io.converge.consumer.http.IdempotencyMetrics;
import io.converge.consumer.http.IdempotencySettings;
import io.converge.consumer.http.IdempotentEndpoint;
import io.converge.consumer.http.TenantResolver;
import io.converge.core.Migrations;
import jakarta.servlet.Filter;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Boot auto-configuration of the Idempotency-Key filter, on with
 * {@code converge.idempotency.enabled=true} in a servlet web application with a {@link DataSource}:
 * the table's migration, the filter (registered for every request; it acts on the configured endpoints
 * and the {@code @Idempotent} handler methods only), a {@link TenantResolver} from
 * {@code converge.idempotency.tenant.*} (default: the authenticated principal; a client-sent header only
 * when configured, with a start-up warning), the purge of expired keys, and Micrometer counters when a
 * {@code MeterRegistry} is present, and a listener on every Spring transaction manager that tells the filter about
 * failed commits (their outcome is unknown: the key is not released). Every bean backs off when the application defines its own.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass({Filter.class, FilterRegistrationBean.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBean(DataSource.class)
@ConditionalOnProperty(prefix = "converge.idempotency", name = "enabled", havingValue = "true")
@EnableConfigurationProperties(IdempotencyProperties.class)
class ConvergeIdempotencyAutoConfiguration {

  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory
      .getLogger(ConvergeIdempotencyAutoConfiguration.class);

  @Bean
  @ConditionalOnMissingBean
  TenantResolver convergeTenantResolver(IdempotencyProperties properties) {
    TenantResolver resolver = properties.tenant().resolver();
    if ("header".equals(properties.tenant().source())) {
      log.warn("converge.idempotency.tenant.source=header: the Idempotency-Key tenant is the client-sent header {}; "
          + "it must be set by a trusted gateway that overwrites it, or a client can claim another tenant's keys and "
          + "read its cached responses", properties.tenant().header());
    }
    return resolver;
  }

  @Bean
  @ConditionalOnMissingBean
  IdempotencyKeyPurger convergeIdempotencyKeyPurger(DataSource dataSource, IdempotencyProperties properties) {
    if (properties.migrate()) {
      Migrations.apply(dataSource, "idempotency");
    }
    return new IdempotencyKeyPurger(dataSource, properties.purgeBatchSize());
  }

  @Bean
  PurgeScheduler convergeIdempotencyPurgeScheduler(IdempotencyKeyPurger purger, IdempotencyProperties properties) {
    return new PurgeScheduler("converge-idempotency-purge", purger::purgeExpired, properties.purgeInterval(),
        "converge.idempotency.purge-interval");
  }

  @Bean(destroyMethod = "destroy") // also when no container destroys it; destroy() is idempotent
  @ConditionalOnMissingBean
  IdempotencyFilter convergeIdempotencyFilter(ApplicationContext context, DataSource dataSource,
      IdempotencyProperties properties, TenantResolver tenants, IdempotencyKeyPurger migrated) {
    List<IdempotentEndpoint> configured = properties.configuredEndpoints();
    IdempotencySettings settings = properties.settings();
    configured.forEach(settings::validate); // at start-up, not at the first request
    return IdempotencyFilter.builder()
        .dataSource(dataSource)
        .tenantResolver(tenants)
        .settings(settings)
        .metrics(metrics(context))
        // the handler methods are known once the context has started: read them at the first request
        .endpoints(() -> endpoints(context, properties, configured))
        .build();
  }

  /**
   * Every endpoint, the {@code @Idempotent} handler methods included, made and checked once all singletons (the
   * handler mappings) exist and before the web server starts: a pattern the filter cannot compile fails the start,
   * naming the pattern, rather than every request to the filter.
   */
  @Bean
  SmartInitializingSingleton convergeIdempotencyEndpointCheck(ApplicationContext context,
      IdempotencyProperties properties) {
    return () -> endpoints(context, properties, properties.configuredEndpoints())
        .forEach(properties.settings()::validate);
  }

  @Bean
  @ConditionalOnMissingBean(name = "convergeIdempotencyFilterRegistration")
  FilterRegistrationBean<IdempotencyFilter> convergeIdempotencyFilterRegistration(IdempotencyFilter filter,
      IdempotencyProperties properties) {
    FilterRegistrationBean<IdempotencyFilter> registration = new FilterRegistrationBean<>(filter);
    registration.setName("convergeIdempotencyFilter");
    registration.setOrder(properties.filterOrder());
    return registration;
  }

  /**
   * Every Spring transaction manager reports its failed commits (outcome unknown) to the filter, which then stores
   * the failure instead of releasing the key.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.transaction.ConfigurableTransactionManager")
  static class CommitOutcomes {

    @Bean
    static BeanPostProcessor convergeCommitOutcomeListenerRegistrar() {
      return new CommitOutcomeListener.Registrar();
    }
  }

  private static List<IdempotentEndpoint> endpoints(ApplicationContext context, IdempotencyProperties properties,
      List<IdempotentEndpoint> configured) {
    List<IdempotentEndpoint> all = new ArrayList<>(configured);
    if (IdempotentMethodScanner.present()) {
      all.addAll(IdempotentMethodScanner.scan(context, properties.defaultExpectedDuration()));
    }
    return all;
  }

  private static IdempotencyMetrics metrics(ApplicationContext context) {
    return ConvergeConsumerAutoConfiguration.ClassPresence.micrometer()
        ? MicrometerBridge.idempotencyMetrics(context)
        : IdempotencyMetrics.NONE;
  }
}
