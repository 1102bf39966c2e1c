package io.converge.console.web;

import jakarta.servlet.http.HttpServletRequest;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.Principal;
import java.util.Collection;
import java.util.List;

/**
 * Who a servlet request is and what it may do in the console: the loopback-only check (no forwarded request),
 * the operator (principal or configured header) and the roles to read and to act. Immutable, thread-safe.
 *
 * @param operatorHeader the header naming the operator when there is no principal; null: none
 * @param roleHeader the header listing that operator's roles (comma-separated); null: none
 * @param actionRole the role or authority an operator needs to act
 * @param readRole the role or authority needed to read; null: anyone on a loopback-only console, the action
 *     role's holders on one that serves other hosts
 * @param allowRemote whether requests from other hosts are served
 */
record ServletAccess(String operatorHeader, String roleHeader, String actionRole, String readRole,
    boolean allowRemote) {

  /** The headers a proxy adds: a request carrying one came through a proxy, whatever its socket peer. */
  static final List<String> FORWARDING_HEADERS = List.of("Forwarded", "X-Forwarded-For", "X-Forwarded-Host",
      "X-Real-IP");

  /**
   * Why a loopback-only console refuses {@code req}, or null. The socket's local address must be a loopback
   * one (Tomcat's {@code RemoteIpValve} and Spring's {@code ForwardedHeaderFilter} rewrite the remote address
   * from the forwarding headers, and may remove those, but never change the local one), so must the remote
   * address, and the request must carry no forwarding header: a proxy on this host makes every request look
   * local.
   */
  String loopbackRefusal(HttpServletRequest req) {
    if (allowRemote) {
      return null;
    }
    String refusal = "The Converge console serves this host only (converge.console.allow-remote)";
    if (!loopback(req.getLocalAddr())) {
      return refusal + ": the request did not arrive on a loopback interface";
    }
    if (!loopback(req.getRemoteAddr())) {
      return refusal;
    }
    String header = forwardingHeader(req::getHeader);
    return header == null ? null : refusal + ": a request through a proxy (" + header + ") is not local";
  }

  /** The first forwarding header {@code headers} answers, or null. */
  static String forwardingHeader(java.util.function.Function<String, String> headers) {
    for (String name : FORWARDING_HEADERS) {
      if (headers.apply(name) != null) {
        return name;
      }
    }
    return null;
  }

  /** The operator: the principal's name, else the operator header's value when configured; null: unknown. */
  String operator(HttpServletRequest req) {
    Principal principal = req.getUserPrincipal();
    return principal != null ? principal.getName() : operatorHeader != null ? req.getHeader(operatorHeader) : null;
  }

  /**
   * Whether {@code req} may read the console: with a read role, its holders and the action role's; without one,
   * anyone on a loopback-only console (this host's users), but only the action role's holders on a console that
   * serves other hosts (every tenant's items are on its pages).
   */
  boolean mayRead(HttpServletRequest req) {
    if (readRole == null && !allowRemote) {
      return true;
    }
    return readRole != null && holds(req, readRole) || holds(req, actionRole);
  }

  /** The roles that read, for a refusal's text. */
  String readers() {
    return readRole == null ? actionRole : readRole + " or " + actionRole;
  }

  /** Whether {@code req} may act. */
  boolean mayAct(HttpServletRequest req) {
    return holds(req, actionRole);
  }

  /**
   * Whether the request's user holds {@code role}: the container's {@code isUserInRole} (Spring Security
   * answers it from the authorities, with its {@code ROLE_} prefix), an authority of that exact name when the
   * principal is a Spring Security {@code Authentication}, or, without a principal, the role header.
   */
  private boolean holds(HttpServletRequest req, String role) {
    Principal principal = req.getUserPrincipal();
    if (principal == null) {
      String roles = roleHeader == null || operatorHeader == null || req.getHeader(operatorHeader) == null ? null
          : req.getHeader(roleHeader);
      return roles != null && List.of(roles.split(",")).stream().map(String::strip).anyMatch(role::equals);
    }
    return req.isUserInRole(role) || hasAuthority(principal, role);
  }

  /** Whether {@code principal} is a Spring Security {@code Authentication} with the authority {@code name}. */
  private static boolean hasAuthority(Principal principal, String name) {
    ClassLoader loader = principal.getClass().getClassLoader();
    try {
      Class<?> authentication = Class.forName("org.springframework.security.core.Authentication", false, loader);
      Class<?> granted = Class.forName("org.springframework.security.core.GrantedAuthority", false, loader);
      if (!authentication.isInstance(principal)) {
        return false;
      }
      Method authority = granted.getMethod("getAuthority");
      for (Object a : (Collection<?>) authentication.getMethod("getAuthorities").invoke(principal)) {
        if (granted.isInstance(a) && name.equals(authority.invoke(a))) {
          return true;
        }
      }
      return false;
    } catch (ReflectiveOperationException | LinkageError e) {
      return false; // no Spring Security: the container's roles decide
    }
  }

  private static boolean loopback(String address) {
    if (address == null || address.isEmpty()) {
      return false;
    }
    try {
      return InetAddress.getByName(address).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
