package io.converge.core.rocketmq;

import io.converge.core.ConvergeException;
import io.converge.core.internal.OptionalDependency;
import io.converge.core.internal.Require;
import java.time.Duration;

/**
 * Validation of the RocketMQ settings every Converge client shares, and the check that the optional
 * {@code rocketmq-client} is on the class path. Touches no RocketMQ type, so that it can run before the
 * client is known to be present. Converge-internal (see the package documentation). Stateless.
 */
public final class RocketMQSettings {

  /** The client class whose presence {@link #requireClient} checks. */
  static final String CLIENT_CLASS = "org.apache.rocketmq.client.producer.DefaultMQProducer";

  /** The default send timeout of Converge's producers: 3 s. */
  public static final Duration DEFAULT_SEND_TIMEOUT = Duration.ofSeconds(3);

  /** The client's default retries of a failed synchronous send: 2. */
  public static final int DEFAULT_RETRIES = 2;

  /** The default largest message body: 4 MiB (the broker's default). */
  public static final int DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

  private RocketMQSettings() {
  }

  /**
   * Returns {@code nameServer} if it is a name server list, {@code host:port[;host:port...]}.
   *
   * @throws IllegalArgumentException quoting the value otherwise
   */
  public static String nameServer(String nameServer) {
    Require.that(nameServer != null && nameServer.matches("[A-Za-z0-9.:;_-]+"), "rocketmq.nameServer",
        "be host:port[;host:port...]", nameServer);
    return nameServer;
  }

  /**
   * Returns {@code timeout} if it is at least 100 ms.
   *
   * @throws IllegalArgumentException quoting the value otherwise
   */
  public static Duration sendTimeout(Duration timeout) {
    return Require.atLeast("rocketmq.sendTimeout", timeout, Duration.ofMillis(100), "100 ms");
  }

  /**
   * Checks that {@code rocketmq-client} is on the class path of this module.
   *
   * @param component what needs it, as in "The RocketMQ <i>backend</i> needs ..."; not null
   * @throws ConvergeException naming the artifact to add when it is absent
   */
  public static void requireClient(String component) {
    OptionalDependency.require("The RocketMQ " + component, "org.apache.rocketmq:rocketmq-client", "5.4.0",
        RocketMQSettings.class, CLIENT_CLASS);
  }
}
