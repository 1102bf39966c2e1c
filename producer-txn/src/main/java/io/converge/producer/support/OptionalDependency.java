package io.converge.producer.support;

import io.converge.producer.ConvergeException;

/**
 * The check that an optional client library (a broker client that only one backend or sink needs) is on
 * the classpath, made where the component starts, so that its absence fails with the artifact to add
 * rather than a {@code NoClassDefFoundError} later. Stateless; thread-safe.
 */
public final class OptionalDependency {

  private OptionalDependency() {}

  /**
   * Fails unless {@code className} can be loaded by the class loader of {@code user}.
   *
   * @param user the class that needs the library (its loader is asked), e.g. {@code RocketMQBackend.class}
   * @param what the component, as the message names it, e.g. {@code "The RocketMQ backend"}
   * @param className a class of the library, e.g. {@code org.apache.rocketmq.client.producer.TransactionMQProducer}
   * @param artifact the library's {@code groupId:artifactId}
   * @param version the version Converge is built with
   * @throws ConvergeException "{@code <what> needs <artifact> on the classpath (add it as a dependency, version <version>)}"
   */
  public static void require(Class<?> user, String what, String className, String artifact, String version) {
    try {
      Class.forName(className, false, user.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new ConvergeException(what + " needs " + artifact + " on the classpath (add it as a dependency, version "
          + version + ")", e);
    }
  }
}
