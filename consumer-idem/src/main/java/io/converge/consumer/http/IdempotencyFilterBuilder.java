package io.converge.consumer.http;

import io.converge.consumer.http.internal.DefaultIdempotencyFilter;
import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import javax.sql.DataSource;

/** Builds an {@link IdempotencyFilter}. Not thread-safe; {@link #build()} validates and may be called once per filter. */
public final class IdempotencyFilterBuilder {

  private DataSource dataSource;
  private DataSource leaseDataSource;
  private TenantResolver tenantResolver;
  private Supplier<? extends Collection<IdempotentEndpoint>> endpoints;
  private List<IdempotentEndpoint> knownEndpoints = List.of();
  private IdempotencySettings settings = IdempotencySettings.defaults();
  private IdempotencyMetrics metrics = IdempotencyMetrics.NONE;
  private Clock clock = Clock.systemUTC();

  IdempotencyFilterBuilder() {
  }

  /** The database holding {@code converge_idempotency_key} (see {@code Migrations.apply(ds, "idempotency")}). Required. */
  public IdempotencyFilterBuilder dataSource(DataSource dataSource) {
    this.dataSource = dataSource;
    return this;
  }

  /**
   * Where the lease keeper takes the one connection it holds for the filter's life to renew the leases
   * of running handlers, so that renewals never wait for a connection behind the application's requests.
   * Default: {@link #dataSource} (one of its pool's connections is then reserved while the filter lives);
   * a small separate data source of the same database keeps the application's pool whole.
   */
  public IdempotencyFilterBuilder leaseDataSource(DataSource leaseDataSource) {
    this.leaseDataSource = leaseDataSource;
    return this;
  }

  /** Who a request acts for; keys are scoped by it. Required. */
  public IdempotencyFilterBuilder tenantResolver(TenantResolver tenantResolver) {
    this.tenantResolver = tenantResolver;
    return this;
  }

  /** The protected endpoints, first match wins. Required (may be empty). */
  public IdempotencyFilterBuilder endpoints(List<IdempotentEndpoint> endpoints) {
    List<IdempotentEndpoint> copy = List.copyOf(endpoints);
    this.knownEndpoints = copy;
    this.endpoints = () -> copy;
    return this;
  }

  /**
   * The protected endpoints, read once at the first request: for frameworks that discover endpoints
   * after the filter is built (Spring MVC's {@code @Idempotent} methods); they are validated then.
   */
  public IdempotencyFilterBuilder endpoints(Supplier<? extends Collection<IdempotentEndpoint>> endpoints) {
    this.knownEndpoints = List.of();
    this.endpoints = endpoints;
    return this;
  }

  /** TTL, lease, headers, ignored fields, body limit; default {@link IdempotencySettings#defaults()}. */
  public IdempotencyFilterBuilder settings(IdempotencySettings settings) {
    this.settings = settings;
    return this;
  }

  /** Default {@link IdempotencyMetrics#NONE}. */
  public IdempotencyFilterBuilder metrics(IdempotencyMetrics metrics) {
    this.metrics = metrics;
    return this;
  }

  /**
   * Ignored: since issue 13.8 claims, leases and expiry are timed with the database's clock ({@code now()}),
   * one clock for every instance, so an instance whose clock is off neither takes over a live lease nor
   * keeps a dead one.
   *
   * @deprecated the database's clock decides; this setting has no effect
   */
  @Deprecated
  public IdempotencyFilterBuilder clock(Clock clock) {
    this.clock = clock;
    return this;
  }

  /**
   * The filter.
   *
   * @throws NullPointerException naming a missing required argument
   * @throws IllegalArgumentException when a listed endpoint expects to run as long as the lease or longer
   */
  public IdempotencyFilter build() {
    Objects.requireNonNull(dataSource, "dataSource");
    Objects.requireNonNull(tenantResolver, "tenantResolver");
    Objects.requireNonNull(endpoints, "endpoints");
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(metrics, "metrics");
    Objects.requireNonNull(clock, "clock");
    knownEndpoints.forEach(settings::validate);
    return new DefaultIdempotencyFilter(dataSource, leaseDataSource == null ? dataSource : leaseDataSource,
        tenantResolver, endpoints, settings, metrics);
  }
}
