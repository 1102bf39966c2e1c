package io.converge.consumer.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.consumer.http.SignedCallbackFilter;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.jdbc.core.JdbcTemplate;

/** What {@code converge.callback.*} turns on, and how missing or bad values fail the start-up, naming them. */
@ExtendWith(PostgresExtension.class)
class CallbackAutoConfigurationIT {

  private static WebApplicationContextRunner runner(DataSource ds) {
    return new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(ConvergeCallbackAutoConfiguration.class))
        .withBean(DataSource.class, () -> ds);
  }

  private static final String[] VALID = {"converge.callback.enabled=true", "converge.callback.provider=acme-pay",
      "converge.callback.secrets=whsec_new,whsec_old", "converge.callback.endpoints[0].path=/payments/{id}/callback"};

  @Test
  void offUnlessEnabled(DataSource ds) {
    runner(ds).run(context -> assertThat(context).doesNotHaveBean(SignedCallbackFilter.class));
  }

  @Test
  void enabledRegistersTheFilterAndMigrates(DataSource ds) {
    runner(ds).withPropertyValues(VALID).withPropertyValues("converge.callback.filter-order=-20").run(context -> {
      assertThat(context).hasNotFailed().hasSingleBean(SignedCallbackFilter.class);
      FilterRegistrationBean<?> registration = context.getBean(FilterRegistrationBean.class);
      assertThat(registration.getFilter()).isSameAs(context.getBean(SignedCallbackFilter.class));
      assertThat(registration.getOrder()).isEqualTo(-20);
      assertThat(new JdbcTemplate(ds).queryForObject("SELECT to_regclass('converge_idempotency_key') IS NOT NULL",
          Boolean.class)).isTrue();
    });
  }

  @Test
  void aMissingOrBadValueFailsTheStartNamingIt(DataSource ds) {
    runner(ds).withPropertyValues("converge.callback.enabled=true", "converge.callback.provider=acme-pay",
        "converge.callback.endpoints[0].path=/cb").run(
            context -> assertThat(context).getFailure()
                .rootCause().hasMessage("converge.callback.secrets must name at least one secret, but was none"));
    runner(ds).withPropertyValues(VALID).withPropertyValues("converge.callback.tolerance=2h").run(
        context -> assertThat(context).getFailure().rootCause()
            .hasMessage("converge.callback.tolerance must be between 1s and 1h, but was PT2H"));
    runner(ds).withPropertyValues(VALID).withPropertyValues("converge.callback.endpoints[0].path=nope").run(
        context -> assertThat(context).getFailure()
            .hasStackTraceContaining(
                "converge.callback.endpoints[0]: endpoint path must start with /, but was 'nope'"));
  }
}
