package io.converge.consumer.http;

import io.converge.consumer.http.internal.DefaultSignedCallbackFilter;
import io.converge.core.internal.Require;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/** Builds a {@link SignedCallbackFilter}. Not thread-safe; {@link #build()} validates and may be called once per filter. */
public final class SignedCallbackFilterBuilder {

  private DataSource dataSource;
  private String provider;
  private CallbackSecrets secrets;
  private List<IdempotentEndpoint> endpoints;
  private CallbackSettings settings = CallbackSettings.defaults();
  private CallbackMetrics metrics = CallbackMetrics.NONE;
  private Clock clock = Clock.systemUTC();

  SignedCallbackFilterBuilder() {
  }

  /**
   * The database holding {@code converge_idempotency_key} (see {@code Migrations.apply(ds, "idempotency")}), where
   * verified callbacks and their answers are kept. Required. Like the Idempotency-Key filter, the filter holds one of
   * its connections for its life, to renew the leases of running handlers.
   */
  public SignedCallbackFilterBuilder dataSource(DataSource dataSource) {
    this.dataSource = dataSource;
    return this;
  }

  /**
   * The payment provider's name (1..40 of {@code A-Z a-z 0-9 . _ -}): callbacks are stored under tenant
   * {@code callback:<provider>}, and logs name it. Required.
   */
  public SignedCallbackFilterBuilder provider(String provider) {
    this.provider = provider;
    return this;
  }

  /** The secrets callbacks are signed with (rotation: several). Required. */
  public SignedCallbackFilterBuilder secrets(CallbackSecrets secrets) {
    this.secrets = secrets;
    return this;
  }

  /**
   * The callback endpoints, first match wins ({@link IdempotentEndpoint}'s patterns; {@code required} and
   * {@code ignoredFields} are not used: a callback always needs its signature, and its fingerprint is its whole
   * body). Required, at least one.
   */
  public SignedCallbackFilterBuilder endpoints(List<IdempotentEndpoint> endpoints) {
    this.endpoints = List.copyOf(endpoints);
    return this;
  }

  /** Header, tolerance, replay window, body limit; default {@link CallbackSettings#defaults()}. */
  public SignedCallbackFilterBuilder settings(CallbackSettings settings) {
    this.settings = settings;
    return this;
  }

  /** Default {@link CallbackMetrics#NONE}. */
  public SignedCallbackFilterBuilder metrics(CallbackMetrics metrics) {
    this.metrics = metrics;
    return this;
  }

  /** The clock the timestamps are checked against; default the system's (UTC). */
  public SignedCallbackFilterBuilder clock(Clock clock) {
    this.clock = clock;
    return this;
  }

  /**
   * The filter.
   *
   * @throws NullPointerException naming a missing required argument
   * @throws IllegalArgumentException for a malformed provider name, no endpoint, or an endpoint expected to run as
   *     long as the lease (1 min) or longer
   */
  public SignedCallbackFilter build() {
    Objects.requireNonNull(dataSource, "dataSource");
    Objects.requireNonNull(secrets, "secrets");
    Objects.requireNonNull(endpoints, "endpoints");
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(metrics, "metrics");
    Objects.requireNonNull(clock, "clock");
    Require.that(provider != null && provider.matches("[A-Za-z0-9._-]{1,40}"), "converge.callback.provider",
        "be 1 to 40 of A-Z a-z 0-9 . _ -", "'" + provider + "'");
    Require.that(!endpoints.isEmpty(), "converge.callback.endpoints", "name at least one endpoint", "none");
    return new DefaultSignedCallbackFilter(dataSource, provider, secrets, endpoints, settings, metrics, clock);
  }
}
