package io.converge.starter;

import io.converge.outbox.spi.OutboxSink;
import io.converge.core.ConvergeException;
import io.converge.core.internal.OptionalDependency;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Properties;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.env.Environment;

/**
 * Checks that the broker client the configured mode needs is on the classpath; without this check a mode
 * whose client is missing makes no producer at all (its auto-configuration backs off) and the service fails
 * later, on a missing {@code TransactionalPublisher}. Stateless; thread-safe.
 *
 * <table>
 * <caption>what each mode needs</caption>
 * <tr><th>setting</th><th>needs</th></tr>
 * <tr><td>{@code converge.producer.mode=rocketmq}</td><td>{@code org.apache.rocketmq:rocketmq-client}</td></tr>
 * <tr><td>{@code converge.producer.mode=pulsar}</td><td>{@code io.converge:converge-pulsar-adapter}</td></tr>
 * <tr><td>{@code mode=outbox}, relay on, no {@code OutboxSink} bean, {@code converge.outbox.sink=rocketmq}
 * (default)</td><td>{@code org.apache.rocketmq:rocketmq-client}</td></tr>
 * <tr><td>{@code mode=outbox}, relay on, no {@code OutboxSink} bean, {@code converge.outbox.sink=pulsar}</td>
 * <td>{@code io.converge:converge-pulsar-adapter}</td></tr>
 * </table>
 * No mode is a service without a producer (e.g. one that only consumes): nothing is checked.
 */
final class ProducerModeCheck {

  static final String MODE = "converge.producer.mode";
  static final String ROCKETMQ_CLIENT = "org.apache.rocketmq:rocketmq-client";
  static final String PULSAR_ADAPTER = "io.converge:converge-pulsar-adapter";
  private static final Properties VERSIONS = versions();

  private ProducerModeCheck() {
  }

  /**
   * Checks the environment's mode against the classpath.
   *
   * @param environment where {@code converge.producer.mode} and {@code converge.outbox.*} are read
   * @param beans the bean definitions (not instances), for an application's own {@code OutboxSink}
   * @throws ConvergeException naming the artifact to add and its version, or the valid modes
   */
  static void check(Environment environment, ListableBeanFactory beans) {
    String mode = environment.getProperty(MODE);
    if (mode == null || mode.isBlank()) {
      return;
    }
    switch (mode.toLowerCase(Locale.ROOT)) {
      case "rocketmq" -> requireRocketMQ(MODE + "=rocketmq");
      case "pulsar" -> requirePulsarAdapter(MODE + "=pulsar");
      case "outbox" -> checkOutboxSink(environment, beans);
      default -> throw new ConvergeException(MODE + " must be rocketmq, pulsar or outbox, but was " + mode);
    }
  }

  private static void checkOutboxSink(Environment environment, ListableBeanFactory beans) {
    boolean relay = !"false".equalsIgnoreCase(environment.getProperty("converge.outbox.relay-enabled", "true").trim());
    if (!relay || beans.getBeanNamesForType(OutboxSink.class, true, false).length > 0) {
      return; // no relay here, or the application publishes through its own sink
    }
    String sink = environment.getProperty("converge.outbox.sink", "rocketmq").trim().toLowerCase(Locale.ROOT);
    switch (sink) {
      case "rocketmq" ->
        requireRocketMQ(MODE + "=outbox with converge.outbox.sink=rocketmq (the relay's default sink)");
      case "pulsar" -> requirePulsarAdapter(MODE + "=outbox with converge.outbox.sink=pulsar");
      default -> {
        // a sink name that is neither: the outbox's auto-configuration rejects it with the valid names
      }
    }
  }

  private static void requireRocketMQ(String component) {
    OptionalDependency.require(component, ROCKETMQ_CLIENT, VERSIONS.getProperty("rocketmq"), ProducerModeCheck.class,
        "org.apache.rocketmq.client.producer.TransactionMQProducer");
  }

  private static void requirePulsarAdapter(String component) {
    OptionalDependency.require(component, PULSAR_ADAPTER, VERSIONS.getProperty("converge"), ProducerModeCheck.class,
        "io.converge.pulsar.PulsarBackend");
    OptionalDependency.require(component, "org.apache.pulsar:pulsar-client", VERSIONS.getProperty("pulsar"),
        ProducerModeCheck.class, "org.apache.pulsar.client.api.PulsarClient");
  }

  private static Properties versions() {
    Properties p = new Properties();
    try (InputStream in = ProducerModeCheck.class.getResourceAsStream("versions.properties")) {
      if (in == null) {
        throw new IllegalStateException("io/converge/starter/versions.properties is missing from the starter's jar");
      }
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p;
  }
}
