package io.converge.consumer.http.internal;

import io.converge.consumer.http.IdempotencySettings;
import io.converge.consumer.http.IdempotentEndpoint;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** An endpoint compiled: its path pattern and its fingerprint's canonicaliser. Immutable. */
record Rule(IdempotentEndpoint endpoint, PathPattern pattern, JsonCanonicalizer canonicalizer) {

  /** Whether {@code method} and either the container's {@code path} or Spring MVC's {@code segments} (nullable) match. */
  boolean matches(String method, String path, List<String> segments) {
    return (endpoint.method().equals("*") || endpoint.method().equals(method))
        && (pattern.matches(path) || (segments != null && pattern.matches(segments)));
  }

  /**
   * Compiles {@code endpoints} in order (the first match wins).
   *
   * @throws IllegalArgumentException when an endpoint expects to run longer than the lease
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
