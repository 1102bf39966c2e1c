package io.converge.examples.demo;

import java.util.Map;

/** The {@code converge.*} properties that put the services on Pulsar. */
final class PulsarTransport {

  private PulsarTransport() {}

  static Map<String, String> properties(String serviceUrl) {
    return Map.of("converge.pulsar.service-url", serviceUrl);
  }
}
