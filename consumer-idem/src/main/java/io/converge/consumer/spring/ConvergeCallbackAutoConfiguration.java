package io.converge.consumer.spring;

import io.converge.consumer.http.CallbackMetrics;
import io.converge.consumer.http.SignedCallbackFilter;
import io.converge.core.Migrations;
import jakarta.servlet.Filter;
import javax.sql.DataSource;
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

/**
 * Spring Boot auto-configuration of the signed-callback filter, on with {@code converge.callback.enabled=true} in a
 * servlet web application with a {@link DataSource}: the Idempotency-Key table's migration, the filter from
 * {@code converge.callback.*} (provider, secrets and endpoints required: a missing one fails the start, naming it),
 * registered for every request (it acts on its endpoints only), and Micrometer counters when a {@code MeterRegistry}
 * is present. Every bean backs off when the application defines its own.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass({Filter.class, FilterRegistrationBean.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBean(DataSource.class)
@ConditionalOnProperty(prefix = "converge.callback", name = "enabled", havingValue = "true")
@EnableConfigurationProperties(CallbackProperties.class)
class ConvergeCallbackAutoConfiguration {

  @Bean(destroyMethod = "destroy")
  @ConditionalOnMissingBean
  SignedCallbackFilter convergeCallbackFilter(ApplicationContext context, DataSource dataSource,
      CallbackProperties properties) {
    SignedCallbackFilter filter = SignedCallbackFilter.builder().dataSource(dataSource)
        .provider(properties.provider()).secrets(properties.callbackSecrets())
        .endpoints(properties.callbackEndpoints()).settings(properties.settings()).metrics(metrics(context))
        .build(); // validated before the migration touches the database
    if (properties.migrate()) {
      Migrations.apply(dataSource, "idempotency");
    }
    return filter;
  }

  @Bean
  @ConditionalOnMissingBean(name = "convergeCallbackFilterRegistration")
  FilterRegistrationBean<SignedCallbackFilter> convergeCallbackFilterRegistration(SignedCallbackFilter filter,
      CallbackProperties properties) {
    FilterRegistrationBean<SignedCallbackFilter> registration = new FilterRegistrationBean<>(filter);
    registration.setName("convergeCallbackFilter");
    registration.setOrder(properties.filterOrder());
    return registration;
  }

  private static CallbackMetrics metrics(ApplicationContext context) {
    return ConvergeConsumerAutoConfiguration.ClassPresence.micrometer()
        ? MicrometerBridge.callbackMetrics(context)
        : CallbackMetrics.NONE;
  }
}
