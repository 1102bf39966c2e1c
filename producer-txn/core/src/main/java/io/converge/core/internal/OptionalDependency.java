package io.converge.core.internal;

import io.converge.core.ConvergeException;

/**
 * The check that an optional dependency is on the classpath, made when the component that needs it
 * is built, so that its absence fails at once with the artifact to add, instead of a
 * {@code NoClassDefFoundError} at the first use. Stateless; thread-safe.
 */
public final class OptionalDependency {

  private OptionalDependency() {
  }

  /**
   * Fails unless every class of {@code classNames} can be loaded by {@code owner}'s class loader
   * (without initialising it).
   *
   * @param component what needs it, e.g. {@code The Pulsar backend}
   * @param artifacts the Maven coordinates to add, e.g. {@code org.apache.pulsar:pulsar-client}
   * @param version the version to add
   * @throws ConvergeException "{@code <component> needs <artifacts> on the classpath (add it as a dependency,
   *     version <version>)}"
   */
  public static void require(String component, String artifacts, String version, Class<?> owner, String... classNames) {
    for (String name : classNames) {
      try {
        Class.forName(name, false, owner.getClassLoader());
      } catch (ClassNotFoundException e) {
        throw new ConvergeException(
            component + " needs " + artifacts + " on the classpath (add it as a dependency, version "
                + version + ")",
            e);
      }
    }
  }
}
