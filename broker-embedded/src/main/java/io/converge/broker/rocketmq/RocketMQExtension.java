package io.converge.broker.rocketmq;

import io.converge.broker.junit.TypedParameterResolver;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that starts one {@link EmbeddedRocketMQ} per test JVM (on first use, with
 * {@link EmbeddedRocketMQ.Builder#fastTransactionChecks() fast check-backs}), shares it between test
 * classes and stops it when the JVM exits. Resolves {@code EmbeddedRocketMQ} parameters of
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
public final class RocketMQExtension extends TypedParameterResolver<EmbeddedRocketMQ> {

  /** Created by JUnit. */
  public RocketMQExtension() {
    super(EmbeddedRocketMQ.class, (parameter, context) -> server(context));
  }

  /** The server shared by every test of this JVM, started on first call. */
  public static EmbeddedRocketMQ server(ExtensionContext context) {
    return sharedServer(context, RocketMQExtension.class,
        () -> EmbeddedRocketMQ.builder().fastTransactionChecks().build().start(), EmbeddedRocketMQ::stop);
  }

  /**
   * A topic (or group) name unique to this call: {@code prefix-} followed by 12 random hex digits.
   *
   * @throws IllegalArgumentException when {@code prefix} has characters RocketMQ refuses in names
   */
  public static String uniqueTopic(String prefix) {
    return uniqueName(prefix);
  }
}
