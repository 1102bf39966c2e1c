package io.converge.consumer.http;

import io.converge.core.internal.Require;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Objects;

/**
 * Finds the tenant a request acts for; Idempotency-Keys are scoped by it, so one tenant never sees
 * another's cached response. Implementations are thread-safe and return null when the request has no
 * tenant (the filter then answers 400 {@link IdempotencyProblem#TENANT_INVALID}).
 */
@FunctionalInterface
public interface TenantResolver {

  /** The tenant of {@code request}, or null. */
  String resolve(HttpServletRequest request);

  /**
   * The value of header {@code name} (e.g. {@code X-Tenant-Id}). The client sends it: use it only behind a
   * trusted gateway that sets (overwrites) it, or one client can claim another's tenant and read its
   * cached responses.
   */
  static TenantResolver header(String name) {
    Require.that(name != null && !name.isBlank(), "tenant header name", "not be blank", "'" + name + "'");
    return request -> request.getHeader(name);
  }

  /** The name of the authenticated principal ({@link HttpServletRequest#getUserPrincipal()}); null when anonymous. */
  static TenantResolver principal() {
    return request -> {
      Principal p = request.getUserPrincipal();
      return p == null ? null : p.getName();
    };
  }

  /**
   * The name of the authenticated principal, or {@code anonymousTenant} for a request without one: the
   * Spring default ({@code converge.idempotency.tenant.source=principal}, anonymous tenant {@code default}).
   * A service without authentication is then one tenant, whose clients are told apart by their keys only.
   */
  static TenantResolver principalOr(String anonymousTenant) {
    Objects.requireNonNull(anonymousTenant, "anonymousTenant");
    return request -> {
      Principal p = request.getUserPrincipal();
      return p == null ? anonymousTenant : p.getName();
    };
  }

  /** Always {@code tenant}: a single-tenant service. */
  static TenantResolver fixed(String tenant) {
    Objects.requireNonNull(tenant, "tenant");
    return request -> tenant;
  }
}
