package io.converge.ops.bench.peer;

import org.springframework.boot.autoconfigure.AutoConfigurationImportFilter;
import org.springframework.boot.autoconfigure.AutoConfigurationMetadata;

/**
 * Keeps the peers' libraries out of the Spring Boot applications that run on the bench's class path (the examples'
 * services of {@code converge chaos}, {@code dev} and the {@code saga-e2e} scenarios): Spring Modulith, there for the
 * {@code modulith-outbox-write} peer only, would otherwise replace each service's event multicaster with its
 * persistent one. The peer imports the auto-configurations it needs by name, which no filter sees. Registered in
 * {@code META-INF/spring.factories}; stateless.
 */
public final class NoPeerAutoConfiguration implements AutoConfigurationImportFilter {

  /** The packages of the peers' auto-configurations. */
  static final String MODULITH = "org.springframework.modulith.";

  @Override
  public boolean[] match(String[] autoConfigurationClasses, AutoConfigurationMetadata metadata) {
    boolean[] keep = new boolean[autoConfigurationClasses.length];
    for (int i = 0; i < keep.length; i++) {
      keep[i] = autoConfigurationClasses[i] == null || !autoConfigurationClasses[i].startsWith(MODULITH);
    }
    return keep;
  }
}
