package io.converge.outbox.rocketmq;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.SendAllResult;
import io.converge.core.ConvergeException;
import io.converge.core.rocketmq.RocketMQSettings;
import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.List;

/**
 * Publishes outbox rows to RocketMQ: one plain producer; the key selects the queue (hash of the key
 * modulo the queue count) so that one key stays on one queue, in order; the envelope travels as user
 * properties. Thread-safe. A batch ({@link #sendAll}) is pipelined: one chain of asynchronous sends per
 * key, the keys concurrently.
 *
 * <p>A send that cannot reach a broker (timeout, connection refused, no route while no broker is
 * registered, e.g. restarting) is reported as {@link io.converge.core.BrokerUnavailableException}
 * and never parks a message; a record the client or broker refuses (too large, illegal properties, no
 * permission, a topic that does not exist: "No route info" while brokers are registered) is reported
 * as {@link io.converge.core.InvalidMessageException} and counts as an attempt. A topic that lives
 * only on brokers that are all down while other brokers are up counts as missing too.
 *
 * <p>Needs {@code org.apache.rocketmq:rocketmq-client} on the classpath (an optional dependency of
 * {@code converge-outbox-relay}).
 */
public final class RocketMQSink implements OutboxSink {

  private final RocketMQClient client;
  private final Duration sendTimeout;

  private RocketMQSink(RocketMQClient client, Duration sendTimeout) {
    this.client = client;
    this.sendTimeout = sendTimeout;
  }

  /** A builder for a sink on the RocketMQ cluster of {@code nameServer} ({@code host:port[;host:port]}). */
  public static Builder nameServer(String nameServer) {
    return new Builder(RocketMQSettings.nameServer(nameServer));
  }

  @Override
  public String name() {
    return "rocketmq";
  }

  @Override
  public void send(OutboxRecord record) throws Exception {
    client.send(record);
  }

  /**
   * Sends the batch as asynchronous chains, one per order key: a key's records one after the other (the
   * next once the broker stored the previous one), different keys concurrently. After a failure the
   * key's later records are not sent.
   */
  @Override
  public SendAllResult sendAll(List<OutboxRecord> records) {
    return PipelinedSends.sendAll(records, client::sendAsync, sendTimeout);
  }

  @Override
  public void close() {
    client.close();
  }

  /** Settings of a {@link RocketMQSink}; not thread-safe. */
  public static final class Builder {

    private final String nameServer;
    private String group = "converge-outbox-relay";
    private Duration sendTimeout = RocketMQSettings.DEFAULT_SEND_TIMEOUT;
    private int maxMessageBytes = RocketMQSettings.DEFAULT_MAX_MESSAGE_BYTES;

    private Builder(String nameServer) {
      this.nameServer = nameServer;
    }

    /** The producer group of the relay's client; default {@code converge-outbox-relay}. */
    public Builder group(String group) {
      this.group = group;
      return this;
    }

    /** How long one send may take before it counts as "broker unavailable"; default 3 s, at least 100 ms. */
    public Builder sendTimeout(Duration timeout) {
      this.sendTimeout = timeout;
      return this;
    }

    /** The largest message body the client sends; default 4 MiB (the broker's default). */
    public Builder maxMessageBytes(int bytes) {
      this.maxMessageBytes = bytes;
      return this;
    }

    /**
     * Validates the settings and starts the client.
     *
     * @throws IllegalArgumentException naming a bad setting and its value
     * @throws ConvergeException when rocketmq-client is missing or the client cannot start
     */
    public RocketMQSink build() {
      Require.that(group != null && group.matches("[A-Za-z0-9_-]{1,100}"), "rocketmq.group",
          "match [A-Za-z0-9_-]{1,100}", group);
      RocketMQSettings client = RocketMQSettings.builder(nameServer).sendTimeout(sendTimeout)
          .maxMessageBytes(maxMessageBytes).build();
      RocketMQSettings.requireClient("sink");
      return new RocketMQSink(new RocketMQClient(client.nameServer(), group, client.sendTimeout(),
          client.maxMessageBytes()), client.sendTimeout());
    }
  }
}
