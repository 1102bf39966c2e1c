package io.converge.core.rocketmq;

import io.converge.core.ConvergeException;
import io.converge.core.internal.OptionalDependency;
import io.converge.core.internal.Require;
import java.time.Duration;

/**
 * The RocketMQ settings every Converge client shares, validated by {@link Builder#build()} (a bad value fails naming
 * the setting and quoting the value), their one-setting validations, and the check that the optional
 * {@code rocketmq-client} is on the class path. Touches no RocketMQ type, so that it can run before the client is
 * known to be present. Converge-internal (see the package documentation). Immutable.
 *
 * @param nameServer the name server list, {@code host:port[;host:port...]}
 * @param sendTimeout how long one send may take, at least 100 ms; default 3 s
 * @param retries retries of a failed synchronous send, 0 to 16; default 2
 * @param maxMessageBytes the largest message body the client sends, 1 byte to 64 MiB; default 4 MiB
 */
public record RocketMQSettings(String nameServer, Duration sendTimeout, int retries, int maxMessageBytes) {

  /** The client class whose presence {@link #requireClient} checks. */
  static final String CLIENT_CLASS = "org.apache.rocketmq.client.producer.DefaultMQProducer";

  /** The default send timeout of Converge's producers: 3 s. */
  public static final Duration DEFAULT_SEND_TIMEOUT = Duration.ofSeconds(3);

  /** The client's default retries of a failed synchronous send: 2. */
  public static final int DEFAULT_RETRIES = 2;

  /** The default largest message body: 4 MiB (the broker's default). */
  public static final int DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

  /** The largest {@link #maxMessageBytes}: 64 MiB. */
  static final int MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

  /** A builder of the settings of a client of the cluster of {@code nameServer}, with the defaults. */
  public static Builder builder(String nameServer) {
    return new Builder(nameServer);
  }

  /** Builds {@link RocketMQSettings}; validates every setting in {@link #build()}. Not thread-safe. */
  public static final class Builder {

    private final String nameServer;
    private Duration sendTimeout = DEFAULT_SEND_TIMEOUT;
    private int retries = DEFAULT_RETRIES;
    private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;

    private Builder(String nameServer) {
      this.nameServer = nameServer;
    }

    /** How long one send may take; default 3 s, at least 100 ms. */
    public Builder sendTimeout(Duration timeout) {
      this.sendTimeout = timeout;
      return this;
    }

    /** Retries of a failed synchronous send; default 2, 0 to 16. */
    public Builder retries(int retries) {
      this.retries = retries;
      return this;
    }

    /** The largest message body the client sends; default 4 MiB, 1 byte to 64 MiB. */
    public Builder maxMessageBytes(int bytes) {
      this.maxMessageBytes = bytes;
      return this;
    }

    /**
     * Validates the settings.
     *
     * @throws IllegalArgumentException naming the setting and quoting its bad value
     */
    public RocketMQSettings build() {
      return new RocketMQSettings(RocketMQSettings.nameServer(nameServer), RocketMQSettings.sendTimeout(sendTimeout),
          Require.between("rocketmq.retries", retries, 0, 16),
          Require.between("rocketmq.maxMessageBytes", maxMessageBytes, 1, MAX_MESSAGE_BYTES));
    }
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
