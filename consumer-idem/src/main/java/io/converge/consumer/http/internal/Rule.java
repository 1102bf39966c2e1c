package io.converge.consumer.http.internal;

import io.converge.consumer.http.IdempotencySettings;
import io.converge.consumer.http.IdempotentEndpoint;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** An endpoint compiled: its path pattern and its fingerprint's canonicaliser. Immutable. */
record Rule(IdempotentEndpoint endpoint, PathPattern pattern, JsonCanonicalizer canonicalizer) {

  /** Whether {@code method} and any of the path's {@linkplain RequestPaths#views views} match. */
  boolean matches(String method, List<List<String>> views) {
    if (!endpoint.method().equals("*") && !endpoint.method().equals(method)) {
      return false;
    }
    for (List<String> view : views) {
      if (pattern.matches(view)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Compiles {@code endpoints} in order (the first match wins).
   *
   * @throws IllegalArgumentException when an endpoint expects to run longer than the lease, or its path pattern
   *     cannot be compiled (the message names the pattern)
   */
  static List<Rule> compile(Collection<IdempotentEndpoint> endpoints, IdempotencySettings settings) {
    List<Rule> rules = new ArrayList<>();
    for (IdempotentEndpoint e : endpoints) {
      settings.validate(e);
      List<String> ignored = new ArrayList<>(settings.ignoredFields());
      ignored.addAll(e.ignoredFields());
      rules.add(new Rule(e, PathPattern.compile(e.path()), new JsonCanonicalizer(ignored)));
    }
    return List.copyOf(rules);
  }
}
