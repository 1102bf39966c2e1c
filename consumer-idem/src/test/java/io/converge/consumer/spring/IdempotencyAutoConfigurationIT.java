package io.converge.consumer.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.consumer.http.IdempotencyFilter;
import io.converge.consumer.http.IdempotencyKeyPurger;
import io.converge.consumer.http.TenantResolver;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.jdbc.core.JdbcTemplate;

/** What {@code converge.idempotency.*} turns on, and how bad values fail the start-up. */
@ExtendWith({PostgresExtension.class, org.springframework.boot.test.system.OutputCaptureExtension.class})
class IdempotencyAutoConfigurationIT {

  private WebApplicationContextRunner runner(DataSource ds) {
    return new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(ConvergeIdempotencyAutoConfiguration.class))
        .withBean(DataSource.class, () -> ds);
  }

  @Test
  void offUnlessEnabled(DataSource ds) {
    runner(ds).run(context -> assertThat(context).doesNotHaveBean(IdempotencyFilter.class));
  }

  @Test
  void enabledRegistersTheFilterMigratesAndSchedulesThePurge(DataSource ds) {
    runner(ds).withPropertyValues("converge.idempotency.enabled=true", "converge.idempotency.filter-order=-50")
        .run(context -> {
          assertThat(context).hasNotFailed().hasSingleBean(IdempotencyFilter.class)
              .hasSingleBean(IdempotencyKeyPurger.class);
          FilterRegistrationBean<?> registration = context.getBean(FilterRegistrationBean.class);
          assertThat(registration.getFilter()).isSameAs(context.getBean(IdempotencyFilter.class));
          assertThat(registration.getOrder()).isEqualTo(-50);
          assertThat(context.getBeansOfType(PurgeScheduler.class).values()).singleElement()
              .satisfies(s -> assertThat(s.isRunning()).isTrue());
          assertThat(new JdbcTemplate(ds).queryForObject(
              "SELECT count(*) FROM converge_idempotency_key", Long.class)).isZero();
        });
  }

  /** A request with this principal (null: anonymous) and this X-Tenant-Id header (nullable). */
  private static jakarta.servlet.http.HttpServletRequest request(String principal, String tenantHeader) {
    return (jakarta.servlet.http.HttpServletRequest) java.lang.reflect.Proxy.newProxyInstance(
        IdempotencyAutoConfigurationIT.class.getClassLoader(),
        new Class<?>[]{jakarta.servlet.http.HttpServletRequest.class},
        (proxy, method, args) -> switch (method.getName()) {
          case "getUserPrincipal" -> principal == null ? null : (java.security.Principal) () -> principal;
          case "getHeader" -> "X-Tenant-Id".equalsIgnoreCase((String) args[0]) ? tenantHeader : null;
          default -> null;
        });
  }

  /** Issue 13.16: the default tenant was the client-sent X-Tenant-Id header. */
  @Test
  void theDefaultTenantIsThePrincipalAndNeverAClientHeader(DataSource ds) {
    runner(ds).withPropertyValues("converge.idempotency.enabled=true").run(context -> {
      TenantResolver tenants = context.getBean(TenantResolver.class);
      assertThat(tenants.resolve(request("alice", "bob"))).isEqualTo("alice");
      assertThat(tenants.resolve(request(null, "bob"))).as("anonymous: the one default tenant").isEqualTo("default");
    });
  }

  @Test
  void aHeaderTenantIsAnExplicitSettingWarnedAboutAtStartUp(DataSource ds,
      org.springframework.boot.test.system.CapturedOutput output) {
    runner(ds).withPropertyValues("converge.idempotency.enabled=true", "converge.idempotency.tenant.source=header")
        .run(context -> assertThat(context.getBean(TenantResolver.class).resolve(request("alice", "bob")))
            .isEqualTo("bob"));
    assertThat(output).contains("converge.idempotency.tenant.source=header")
        .contains("must be set by a trusted gateway");
  }

  @Test
  void theApplicationsTenantResolverWins(DataSource ds) {
    TenantResolver mine = request -> "mine";
    runner(ds).withPropertyValues("converge.idempotency.enabled=true")
        .withBean(TenantResolver.class, () -> mine)
        .run(context -> assertThat(context.getBean(TenantResolver.class)).isSameAs(mine));
  }

  @Test
  void badValuesFailTheStartNamingTheProperty(DataSource ds) {
    assertFails(ds, "converge.idempotency.ttl must be at least 1m and longer than the lease (PT1M), but was PT30S",
        "converge.idempotency.ttl=30s");
    assertFails(ds, "converge.idempotency.tenant.source must be header, principal or fixed, but was 'cookie'",
        "converge.idempotency.tenant.source=cookie");
    assertFails(ds, "converge.idempotency.endpoints[0]: endpoint path must start with /, but was 'orders'",
        "converge.idempotency.endpoints[0].path=orders");
    assertFails(ds,
        "endpoint POST /orders: expected-duration must be shorter than converge.idempotency.lease (PT10S), but was PT15S",
        "converge.idempotency.lease=10s", "converge.idempotency.endpoints[0].path=/orders",
        "converge.idempotency.endpoints[0].expected-duration=15s");
    assertFails(ds,
        "converge.idempotency.default-expected-duration must be positive and shorter than converge.idempotency.lease",
        "converge.idempotency.default-expected-duration=2m");
    assertFails(ds, "converge.idempotency.purge-interval must be at least 1s, but was PT0S",
        "converge.idempotency.purge-interval=0s");
  }

  /**
   * Issue 31.5: a pattern the filter cannot read ran unprotected. A configured one fails the start naming its
   * property; an {@code @Idempotent} mapping that Spring MVC accepts through its {@code AntPathMatcher} (Spring's
   * {@code PathPatternParser}, the default, refuses a {@code **} in the middle before the filter sees it) fails the
   * start naming the handler method and the pattern, before the web server takes a request.
   */
  @Test
  void aPatternTheFilterCannotCompileFailsTheStartNamingIt(DataSource ds) {
    assertFails(ds, "converge.idempotency.endpoints[0]: path pattern '/orders/**/items' cannot be compiled "
        + "(Spring MVC's syntax): {*...} or ** pattern elements should be placed at the start or end of the pattern",
        "converge.idempotency.endpoints[0].path=/orders/**/items");
    runner(ds).withConfiguration(AutoConfigurations.of(
        org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration.class,
        org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration.class))
        .withUserConfiguration(AntPatterns.class)
        .withPropertyValues("converge.idempotency.enabled=true",
            "spring.mvc.pathmatch.matching-strategy=ant-path-matcher")
        .run(context -> assertThat(context).getFailure().hasStackTraceContaining(
            "@Idempotent io.converge.consumer.spring.IdempotencyAutoConfigurationIT$AntPatterns#refund()")
            .hasStackTraceContaining("path pattern '/v1/charges/**/refund' cannot be compiled"));
  }

  /** A handler that only Spring MVC's {@code AntPathMatcher} maps. */
  @org.springframework.web.bind.annotation.RestController
  static class AntPatterns {

    @io.converge.consumer.http.Idempotent
    @org.springframework.web.bind.annotation.PostMapping("/v1/charges/**/refund")
    String refund() {
      return "refunded";
    }
  }

  private void assertFails(DataSource ds, String message, String... properties) {
    runner(ds).withPropertyValues("converge.idempotency.enabled=true").withPropertyValues(properties)
        .run(context -> assertThat(context).getFailure().hasStackTraceContaining(message));
  }
}
