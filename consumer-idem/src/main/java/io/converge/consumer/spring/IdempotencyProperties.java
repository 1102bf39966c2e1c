package io.converge.consumer.spring;

import io.converge.consumer.http.IdempotencySettings;
import io.converge.consumer.http.IdempotentEndpoint;
import io.converge.consumer.http.TenantResolver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * {@code converge.idempotency.*}: the Idempotency-Key filter. Immutable, validated when the context starts.
 *
 * @param enabled turns the filter on; default false
 * @param migrate apply the {@code converge_idempotency_key} migration at start-up; default true
 * @param ttl how long a key and its response are kept; default 24h
 * @param lease how long a claim is held before a retry may take it over; default 1m, longer than every expected duration
 * @param keyHeader default {@code Idempotency-Key}
 * @param replayedHeaders response headers stored and replayed; default Content-Type, Content-Language, Location,
 *     ETag, Last-Modified, Retry-After
 * @param ignoredFields dotted JSON paths left out of every fingerprint; default none
 * @param maxBodySize the largest request body on a protected endpoint; default 1MB
 * @param maxResponseSize the largest response body stored; a larger one is sent, not stored, and the key answers its
 *     retries 409 answer-not-stored; default 1MB, at most 64MB
 * @param defaultExpectedDuration expected duration of {@code @Idempotent} methods and of endpoints that set none; default 2s
 * @param endpoints the protected endpoints, first match wins, before the {@code @Idempotent} methods
 * @param tenant where the tenant comes from
 * @param purgeBatchSize rows per purge batch; default 1000
 * @param purgeInterval time between purges of expired keys; default 10m
 * @param filterOrder the filter's order; default 0, after Spring Security's chain (-100), so that
 *     {@code tenant.source=principal} sees the authenticated user
 */
@ConfigurationProperties("converge.idempotency")
public record IdempotencyProperties(
    @DefaultValue("false") boolean enabled,
    @DefaultValue("true") boolean migrate,
    @DefaultValue("24h") Duration ttl,
    @DefaultValue("1m") Duration lease,
    @DefaultValue(IdempotencySettings.DEFAULT_KEY_HEADER) String keyHeader,
    @DefaultValue({
        "Content-Type", "Content-Language", "Location", "ETag", "Last-Modified",
        "Retry-After"}) List<String> replayedHeaders,
    List<String> ignoredFields,
    @DefaultValue("1MB") DataSize maxBodySize,
    @DefaultValue("1MB") DataSize maxResponseSize,
    @DefaultValue("2s") Duration defaultExpectedDuration,
    List<Endpoint> endpoints,
    @DefaultValue Tenant tenant,
    @DefaultValue("1000") int purgeBatchSize,
    @DefaultValue("10m") Duration purgeInterval,
    @DefaultValue("0") int filterOrder) {

  /**
   * {@code converge.idempotency.endpoints[i].*}.
   *
   * @param method HTTP method or {@code *}; default POST
   * @param path path pattern ({@code /orders/**}, {@code /orders/{id}/refunds}); required
   * @param expectedDuration for {@code Retry-After}; default {@code default-expected-duration}
   * @param required refuse a request without a key (400); default true
   * @param ignoredFields this endpoint's own ignored JSON paths
   */
  public record Endpoint(@DefaultValue("POST") String method, String path, Duration expectedDuration,
      @DefaultValue("true") boolean required, List<String> ignoredFields) {
  }

  /**
   * {@code converge.idempotency.tenant.*}.
   *
   * @param source {@code principal} (default: the authenticated user's name, {@code fixed} for a request
   *     without one), {@code header} (the client-sent {@code header}: only behind a trusted gateway that sets
   *     it; warned about at start-up) or {@code fixed}
   * @param header the header of {@code source=header}; default {@code X-Tenant-Id}
   * @param fixed the tenant of {@code source=fixed}, and of anonymous requests under {@code source=principal};
   *     default {@code default}
   */
  public record Tenant(@DefaultValue("principal") String source, @DefaultValue("X-Tenant-Id") String header,
      @DefaultValue("default") String fixed) {

    TenantResolver resolver() {
      return switch (source) {
        case "header" -> TenantResolver.header(header);
        case "principal" -> TenantResolver.principalOr(fixed);
        case "fixed" -> TenantResolver.fixed(fixed);
        default -> throw new IllegalArgumentException(
            "converge.idempotency.tenant.source must be header, principal or fixed, but was '" + source + "'");
      };
    }
  }

  IdempotencySettings settings() {
    long size = maxBodySize.toBytes();
    if (size > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "converge.idempotency.max-body-size must be at most 64MB, but was " + maxBodySize);
    }
    long responseSize = maxResponseSize.toBytes();
    if (responseSize > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "converge.idempotency.max-response-size must be at most 64MB, but was " + maxResponseSize);
    }
    IdempotencySettings settings = new IdempotencySettings(ttl, lease, keyHeader, replayedHeaders, ignoredFields,
        (int) size, (int) responseSize);
    if (defaultExpectedDuration == null || defaultExpectedDuration.isNegative() || defaultExpectedDuration.isZero()
        || defaultExpectedDuration.compareTo(lease) >= 0) {
      throw new IllegalArgumentException("converge.idempotency.default-expected-duration must be positive and shorter "
          + "than converge.idempotency.lease (" + lease + "), but was " + defaultExpectedDuration);
    }
    return settings;
  }

  List<IdempotentEndpoint> configuredEndpoints() {
    List<IdempotentEndpoint> out = new ArrayList<>();
    if (endpoints != null) {
      for (int i = 0; i < endpoints.size(); i++) {
        Endpoint e = endpoints.get(i);
        try {
          out.add(new IdempotentEndpoint(e.method(), e.path(),
              e.expectedDuration() == null ? defaultExpectedDuration : e.expectedDuration(), e.required(),
              e.ignoredFields()));
        } catch (IllegalArgumentException ex) {
          throw new IllegalArgumentException("converge.idempotency.endpoints[" + i + "]: " + ex.getMessage(), ex);
        }
      }
    }
    return out;
  }
}
