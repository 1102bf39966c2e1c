package io.converge.consumer.rocketmq;

import io.converge.consumer.IdempotentHandler;
import io.converge.core.ConvergeException;
import io.converge.core.rocketmq.RocketMQSettings;
import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.Objects;

/**
 * Binds an {@link IdempotentHandler} to a RocketMQ push consumer (clustering mode). Each message is
 * handed to the handler; when it returns an outcome the message is acked, when it throws (the
 * database could not even record the failure) the broker redelivers it later. While the database or a
 * broker the handler publishes to is unavailable, the handler waits on its consumer thread and runs the
 * same message again when the outage ends (no attempt counted), so the consumer's threads block and it
 * takes no new messages meanwhile. Needs
 * {@code org.apache.rocketmq:rocketmq-client} on the class path.
 *
 * <p><b>Per-key order</b> (the default, {@link Builder#ordered(boolean) ordered(true)}): an orderly push
 * consumer locks each queue and handles its messages one at a time in queue order; a message that could not
 * be acked is delivered again (after {@link Builder#suspendTime}) before the next message of its queue. A
 * producer that sends one key to one queue (Converge's do) gets the key's messages handled in publish order;
 * other queues run in parallel on the consumer threads. A message parked in {@code converge_dlq} holds the
 * later messages of its key (see {@link IdempotentHandler#releaseHeld}); this consumer releases them
 * every {@link Builder#releaseInterval} once the parked one is resumed or discarded.
 *
 * <p>A group with no committed offset starts from the first offset of each queue, so nothing
 * published before the first start is skipped. Thread-safe; {@link #close()} is idempotent.
 */
public final class RocketMQIdempotentConsumer implements AutoCloseable {

  /** The default {@link Builder#consumeTimeout}. */
  public static final Duration DEFAULT_CONSUME_TIMEOUT = Duration.ofHours(24);

  /** The default {@link Builder#suspendTime}. */
  public static final Duration DEFAULT_SUSPEND_TIME = Duration.ofSeconds(1);

  /** The default {@link Builder#releaseInterval}. */
  public static final Duration DEFAULT_RELEASE_INTERVAL = Duration.ofSeconds(5);

  private final PushConsumer consumer;

  private RocketMQIdempotentConsumer(PushConsumer consumer) {
    this.consumer = consumer;
  }

  /** A builder; name server, topic and handler are required. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Stops consuming. A handler that is waiting out a database or broker outage is interrupted: its
   * message is not acked and is redelivered. Other in-flight messages finish.
   */
  @Override
  public void close() {
    consumer.shutdown();
  }

  /** The RocketMQ consumer group (the handler's group unless set). */
  public String group() {
    return consumer.group();
  }

  /**
   * The validated settings of a consumer ({@link Builder#build()}); see the builder's methods for each default.
   *
   * @param nameServer the name server list
   * @param topic the topic
   * @param tags the tag expression
   * @param group the RocketMQ consumer group (the handler's group unless set)
   * @param handler the dedup decorator
   * @param consumeThreads consumer threads, 1..256
   * @param redeliveryDelayLevel unordered only: the delay level of a broker redelivery, 0..18
   * @param instanceName the client instance name, or null for a unique one
   * @param consumeTimeout how long one message may be in the handler, 1 min..7 d
   * @param ordered whether one key is handled in order
   * @param suspendTime ordered only: the pause of a queue before a redelivery, 10 ms..30 s
   * @param releaseInterval how often held messages are looked for, 10 ms..1 h
   */
  public record Settings(String nameServer, String topic, String tags, String group, IdempotentHandler handler,
      int consumeThreads, int redeliveryDelayLevel, String instanceName, Duration consumeTimeout, boolean ordered,
      Duration suspendTime, Duration releaseInterval) {
  }

  /**
   * Creates and starts a consumer with {@code settings}.
   *
   * @throws ConvergeException naming {@code rocketmq-client} when it is absent, or when the client cannot start
   */
  public static RocketMQIdempotentConsumer start(Settings settings) {
    Objects.requireNonNull(settings, "settings");
    RocketMQSettings.requireClient("binding");
    return new RocketMQIdempotentConsumer(
        PushConsumer.start(settings.nameServer(), settings.topic(), settings.tags(), settings.group(),
            settings.handler(), settings.consumeThreads(), settings.redeliveryDelayLevel(), settings.instanceName(),
            settings.consumeTimeout(), settings.ordered(), settings.suspendTime(), settings.releaseInterval()));
  }

  /** Builds and starts a {@link RocketMQIdempotentConsumer}; every setting is validated in {@link #build()}. Not thread-safe. */
  public static final class Builder {

    private String nameServer;
    private String topic;
    private String tags = "*";
    private String group;
    private IdempotentHandler handler;
    private int consumeThreads = 4;
    private int redeliveryDelayLevel = 0;
    private String instanceName;
    private Duration consumeTimeout = DEFAULT_CONSUME_TIMEOUT;
    private boolean ordered = true;
    private Duration suspendTime = DEFAULT_SUSPEND_TIME;
    private Duration releaseInterval = DEFAULT_RELEASE_INTERVAL;

    private Builder() {
    }

    /** The name server list, {@code host:port;host:port}; required. */
    public Builder nameServer(String nameServer) {
      this.nameServer = nameServer;
      return this;
    }

    /** The topic; required. */
    public Builder topic(String topic) {
      this.topic = topic;
      return this;
    }

    /** The tag expression; default {@code *}. */
    public Builder tags(String tags) {
      this.tags = tags;
      return this;
    }

    /** The RocketMQ consumer group; default the handler's group. */
    public Builder group(String group) {
      this.group = group;
      return this;
    }

    /** The dedup decorator; required. */
    public Builder handler(IdempotentHandler handler) {
      this.handler = handler;
      return this;
    }

    /** Consumer threads, 1..256; default 4. */
    public Builder consumeThreads(int threads) {
      this.consumeThreads = threads;
      return this;
    }

    /**
     * Unordered only ({@code ordered(false)}): the delay level of a broker redelivery after the database was
     * unreachable, 0..18; default 0 (the
     * broker's schedule: 10 s, 30 s, 1 min, … about 4 h 46 min in all).
     */
    public Builder redeliveryDelayLevel(int level) {
      this.redeliveryDelayLevel = level;
      return this;
    }

    /**
     * How long one message may be in the handler before RocketMQ sends it back to the broker for a later
     * redelivery (RocketMQ's {@code consumeTimeout}), 1 min..7 d; default 24 h (RocketMQ's own default is
     * 15 min). A handler waits out a database or broker outage on its consumer thread, without limit: an
     * outage longer than this setting makes RocketMQ deliver a second copy of each waiting message (the
     * dedup absorbs it, but the order of those messages is lost).
     */
    public Builder consumeTimeout(Duration timeout) {
      this.consumeTimeout = timeout;
      return this;
    }

    /**
     * Whether one key is handled in order; default {@code true} (an orderly consumer: one thread per queue at a
     * time, a redelivery before the queue's next message). {@code false} is the explicit opt-out to a
     * concurrent consumer: several threads per queue, a redelivery comes back after later messages, so two
     * messages of one key may be handled at once or out of order (no per-key order; a parked message still
     * holds the later messages of its key that arrive after it was parked).
     */
    public Builder ordered(boolean ordered) {
      this.ordered = ordered;
      return this;
    }

    /**
     * Ordered only: how long a queue pauses before a message that could not be acked is delivered again,
     * 10 ms..30 s; default 1 s.
     */
    public Builder suspendTime(Duration suspendTime) {
      this.suspendTime = suspendTime;
      return this;
    }

    /**
     * How often this consumer looks for held messages to release (those behind a parked message that was
     * resumed or discarded), 10 ms..1 h; default 5 s.
     */
    public Builder releaseInterval(Duration interval) {
      this.releaseInterval = interval;
      return this;
    }

    /** The client instance name; default a unique one (so that several consumers can share a JVM). */
    public Builder instanceName(String name) {
      this.instanceName = name;
      return this;
    }

    /**
     * Validates the settings.
     *
     * @throws IllegalArgumentException naming a missing or invalid setting and quoting its value
     */
    public Settings build() {
      notBlank("rocketmq.nameServer", nameServer);
      notBlank("rocketmq.topic", topic);
      notBlank("rocketmq.tags", tags);
      Require.that(handler != null, "rocketmq.handler", "be set", null);
      Require.between("rocketmq.consumeThreads", consumeThreads, 1, 256);
      Require.between("rocketmq.redeliveryDelayLevel", redeliveryDelayLevel, 0, 18);
      Require.between("rocketmq.consumeTimeout", consumeTimeout, Duration.ofMinutes(1), Duration.ofDays(7),
          "1 min and 7 d");
      Require.between("rocketmq.suspendTime", suspendTime, Duration.ofMillis(10), Duration.ofSeconds(30),
          "10 ms and 30 s");
      Require.between("rocketmq.releaseInterval", releaseInterval, Duration.ofMillis(10), Duration.ofHours(1),
          "10 ms and 1 h");
      return new Settings(nameServer, topic, tags, group != null ? group : handler.group(), handler, consumeThreads,
          redeliveryDelayLevel, instanceName, consumeTimeout, ordered, suspendTime, releaseInterval);
    }

    /**
     * Validates, creates and starts the consumer: {@code RocketMQIdempotentConsumer.start(build())}.
     *
     * @throws IllegalArgumentException naming a missing or invalid setting
     * @throws ConvergeException naming {@code rocketmq-client} when it is absent, or when the client
     *     cannot start
     */
    public RocketMQIdempotentConsumer start() {
      return RocketMQIdempotentConsumer.start(build());
    }

    private static void notBlank(String property, String value) {
      Require.that(value != null && !value.isBlank(), property, "not be blank", value);
    }
  }
}
