package io.converge.console.web;

import java.util.Map;
import java.util.Objects;

/**
 * One request to the console, whatever serves it (the JDK's HTTP server, a servlet). Immutable.
 *
 * @param method {@code GET} or {@code POST}
 * @param path the path below the console's root, starting with {@code /} ({@code /} is the overview)
 * @param params the query parameters and, for a POST, the form fields (the first value of each)
 * @param operator who is asking (the CLI's {@code --operator}, the request's principal or a configured
 *     header); null when unknown: such a request can look but not act
 * @param mayAct whether the operator may act (holds the action role, or is the CLI's operator); false when
 *     the operator is null
 */
public record ConsoleRequest(String method, String path, Map<String, String> params, String operator,
    boolean mayAct) {

  /** Checks and copies. */
  public ConsoleRequest {
    Objects.requireNonNull(method, "method");
    path = path == null || path.isEmpty() ? "/" : path;
    params = params == null ? Map.of() : Map.copyOf(params);
    operator = operator == null || operator.isBlank() ? null : operator.strip();
    mayAct = mayAct && operator != null;
  }

  /**
   * A request of {@code operator}, who may act when known: the console's own server, where every request is
   * the one operator who started it ({@code converge console --operator}).
   */
  public ConsoleRequest(String method, String path, Map<String, String> params, String operator) {
    this(method, path, params, operator, true);
  }

  /** The parameter {@code name}, or null when absent or blank. */
  public String param(String name) {
    String v = params.get(name);
    return v == null || v.isBlank() ? null : v;
  }
}
