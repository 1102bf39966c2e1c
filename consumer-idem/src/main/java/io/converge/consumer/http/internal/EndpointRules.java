package io.converge.consumer.http.internal;

import io.converge.consumer.http.IdempotencySettings;
import io.converge.consumer.http.IdempotentEndpoint;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The endpoints of one filter that take an Idempotency-Key, compiled at the first request (the endpoint source, e.g.
 * Spring MVC's handler mappings, is complete only once the application has started; the Spring auto-configuration
 * checks them at start-up). An endpoint source that fails fails every request: none runs unprotected. Thread-safe.
 */
final class EndpointRules {

  private static final Logger log = LoggerFactory.getLogger(EndpointRules.class);

  private final Supplier<? extends Collection<IdempotentEndpoint>> endpointSource;
  private final IdempotencySettings settings;
  private volatile List<Rule> rules;

  EndpointRules(Supplier<? extends Collection<IdempotentEndpoint>> endpointSource, IdempotencySettings settings) {
    this.endpointSource = endpointSource;
    this.settings = settings;
  }

  /** The rule of a request; null when the endpoint takes no key. */
  Rule match(String method, List<List<String>> views) {
    List<Rule> r = rules;
    if (r == null) {
      r = resolve();
    }
    for (Rule rule : r) {
      if (rule.matches(method, views)) {
        return rule;
      }
    }
    return null;
  }

  private synchronized List<Rule> resolve() {
    if (rules == null) {
      rules = Rule.compile(endpointSource.get(), settings);
      log.info("Idempotency-Key required or accepted on {}", rules.stream().map(Rule::endpoint).toList());
    }
    return rules;
  }
}
