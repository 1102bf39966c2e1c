package io.converge.broker.pulsar;

import io.converge.broker.EmbeddedServerException;
import java.nio.file.Path;

/**
 * A jar of the embedded Pulsar's classpath is not in the local Maven repository, so the child JVM
 * cannot be launched. The jars are resolved by Maven with {@code io.converge:converge-pulsar-server}
 * but are not on the test classpath (on purpose), so a repository that was pruned or a different
 * {@code maven.repo.local} loses them.
 */
public final class PulsarArtifactMissingException extends EmbeddedServerException {

  private static final long serialVersionUID = 1L;

  private final String artifact;
  private final transient Path path;

  PulsarArtifactMissingException(String artifact, Path path, Path repository) {
    super("Embedded Pulsar needs " + artifact + " but " + path + " is missing from the local Maven repository "
        + repository + ": resolve it, e.g. mvn dependency:resolve in a project that depends on "
        + "io.converge:converge-pulsar-server (or mvn dependency:get -Dartifact=" + artifact
        + "), or point -Dmaven.repo.local at the repository that has it");
    this.artifact = artifact;
    this.path = path;
  }

  /** The missing artifact as {@code groupId:artifactId:version[:jar:classifier]}, never null. */
  public String artifact() {
    return artifact;
  }

  /** Where the jar was expected, never null. */
  public Path path() {
    return path;
  }
}
