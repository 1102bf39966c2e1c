package io.converge.broker.rocketmq;

import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension that starts one {@link EmbeddedRocketMQ} per test JVM (on first use, with
 * {@link EmbeddedRocketMQ.Builder#fastTransactionChecks() fast check-backs}), shares it between test
 * classes and stops it when the test run ends. Resolves {@code EmbeddedRocketMQ} parameters of
 * constructors, lifecycle and test methods.
 *
 * <pre>{@code
 * @ExtendWith(RocketMQExtension.class)
 * class MyIT {
 *   @Test void sends(EmbeddedRocketMQ mq) {
 *     String topic = RocketMQExtension.uniqueTopic("orders");
 *     mq.createTopic(topic);
 *     ...
 *   }
 * }
 * }</pre>
 *
 * Isolate tests by unique topic and group names, not by restarting the server.
 */
public final class RocketMQExtension implements ParameterResolver {

  private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9_-]{1,80}");
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace
      .create(RocketMQExtension.class);

  /** Created by JUnit. */
  public RocketMQExtension() {
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == EmbeddedRocketMQ.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return server(context);
  }

  /** The server shared by every test of this JVM, started on first call. */
  public static EmbeddedRocketMQ server(ExtensionContext context) {
    return context.getRoot().getStore(NAMESPACE)
        .getOrComputeIfAbsent(Shared.class, k -> new Shared(), Shared.class).server;
  }

  /**
   * A topic (or group) name unique to this call: {@code prefix-} followed by 12 random hex digits.
   *
   * @throws IllegalArgumentException when {@code prefix} has characters RocketMQ refuses in names
   */
  public static String uniqueTopic(String prefix) {
    if (prefix == null || !PREFIX.matcher(prefix).matches()) {
      throw new IllegalArgumentException("prefix must match " + PREFIX.pattern() + ", but was " + prefix);
    }
    return prefix + "-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  /** Holds the shared server; JUnit closes it when the root context closes. */
  private static final class Shared implements AutoCloseable {

    final EmbeddedRocketMQ server = EmbeddedRocketMQ.builder().fastTransactionChecks().build().start();

    @Override
    public void close() {
      server.stop();
    }
  }
}
