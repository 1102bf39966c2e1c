package io.converge.broker.rocketmq;

import io.converge.broker.internal.Poll;
import io.converge.broker.Dirs;
import io.converge.broker.EmbeddedServerException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.constant.PermName;
import org.apache.rocketmq.namesrv.NamesrvController;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real RocketMQ 5 name server and broker running in this JVM, on 127.0.0.1 with free ports, a
 * temporary store and small mapped files, for development and tests.
 *
 * <p>The transaction check-back timing is configurable so that a test sees a check-back within about
 * a second (the broker's defaults wait a minute). The broker can be stopped and started again on the
 * same store and port ({@link #stopBroker()}, {@link #startBroker()}), to test a broker outage.
 *
 * <p>Start one per JVM (a start costs about 5 s, a broker stop 6-8 s, 3 s of it a fixed sleep of the
 * store) and isolate tests with unique topic names: see {@link RocketMQExtension}. Thread-safe;
 * {@link #stop()} is idempotent.
 */
public final class EmbeddedRocketMQ implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedRocketMQ.class);

  private final Settings settings;
  private final ReentrantLock lock = new ReentrantLock();
  private final BrokerLauncher launcher;
  private NamesrvController nameServer;
  private BrokerController broker;
  private boolean started;

  private EmbeddedRocketMQ(Settings settings) {
    this.settings = settings;
    this.launcher = new BrokerLauncher(settings);
  }

  /** A builder with the defaults documented on its methods. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Starts the name server, then the broker, and waits until the broker has registered.
   *
   * @return this
   * @throws EmbeddedServerException naming the port or directory at fault
   */
  public EmbeddedRocketMQ start() {
    lock.lock();
    try {
      if (started) {
        return this;
      }
      long t0 = System.nanoTime();
      startNameServer();
      broker = launcher.startBroker();
      started = true;
      LOG.info("RocketMQ started in {} ms: name server {}, broker {}",
          (System.nanoTime() - t0) / 1_000_000, nameServerAddress(), brokerAddress());
      return this;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Starts the name server alone: RocketMQ as clients see it while every broker is stopped (no broker registered,
   * no topic routed; the name server drops a topic with its last broker), without the cost of starting a broker
   * to stop it. {@link #startBroker()} starts the broker later; {@link #stop()} stops the name server.
   *
   * @return this
   * @throws EmbeddedServerException naming the port or directory at fault
   */
  public EmbeddedRocketMQ startWithoutBroker() {
    lock.lock();
    try {
      if (!started) {
        startNameServer();
        started = true;
        LOG.info("RocketMQ name server started alone: {}", nameServerAddress());
      }
      return this;
    } finally {
      lock.unlock();
    }
  }

  /** Starts the name server, preparing what a broker started with or after it needs. Under {@code lock}. */
  private void startNameServer() {
    // BrokerStartup sets this; without it a broker registers no topics ("No route info").
    System.setProperty(RemotingCommand.REMOTING_VERSION_KEY, Integer.toString(MQVersion.CURRENT_VERSION));
    Dirs.requireWritable(settings.storeDir(), "RocketMQ store");
    nameServer = launcher.startNameServer();
  }

  /** Stops the broker, keeping its store and port, e.g. to test a broker outage. */
  public void stopBroker() {
    lock.lock();
    try {
      requireStarted();
      if (broker != null) {
        BrokerLauncher.shutdown(broker);
        broker = null;
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Starts the broker again on the same store and port after {@link #stopBroker()}, and waits (up to
   * 30 s per topic) until the name server routes every topic of its store again, so that a client
   * started now can send at once.
   */
  public void startBroker() {
    lock.lock();
    try {
      requireStarted();
      if (broker == null) {
        broker = launcher.startBroker();
        for (String topic : List.copyOf(broker.getTopicConfigManager().getTopicConfigTable().keySet())) {
          awaitRoute(topic);
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** {@link #stopBroker()} then {@link #startBroker()}. */
  public void restartBroker() {
    stopBroker();
    startBroker();
  }

  /**
   * Creates {@code topic} with {@link Builder#queuesPerTopic(int)} read and write queues (idempotent)
   * and registers it with the name server, so that a producer can route to it at once.
   */
  public void createTopic(String topic) {
    Objects.requireNonNull(topic, "topic");
    lock.lock();
    try {
      requireStarted();
      if (broker == null) {
        throw new EmbeddedServerException("RocketMQ broker is stopped: cannot create topic " + topic);
      }
      TopicConfig config = new TopicConfig(topic, settings.queuesPerTopic(), settings.queuesPerTopic(),
          PermName.PERM_READ | PermName.PERM_WRITE);
      broker.getTopicConfigManager().updateTopicConfig(config);
      // A full, forced registration: the name server refuses a one-topic increment from a broker whose
      // first registration it has not processed yet.
      broker.registerBrokerAll(true, false, true);
      awaitRoute(topic);
    } finally {
      lock.unlock();
    }
  }

  /** The name server drops a stopped broker asynchronously; stopping it before then logs an error. */
  private void awaitUnregistered() {
    try {
      Poll.until(Duration.ofSeconds(2), Poll.EVERY,
          () -> nameServer.getRouteInfoManager().getAllClusterInfo().getBrokerAddrTable().isEmpty());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void awaitRoute(String topic) {
    long[] nextRegistration = {System.nanoTime() + Duration.ofSeconds(1).toNanos()};
    Poll.until(Duration.ofSeconds(30), Duration.ofMillis(10), () -> {
      if (nameServer.getRouteInfoManager().pickupTopicRouteData(topic) != null) {
        return true;
      }
      long now = System.nanoTime();
      if (now > nextRegistration[0]) {
        // a registration the name server dropped (it was busy, or saw an older data version) is not retried
        // by the broker until its 30 s heartbeat: register again
        broker.registerBrokerAll(true, false, true);
        nextRegistration[0] = now + Duration.ofSeconds(1).toNanos();
      }
      return false;
    }, () -> new EmbeddedServerException("RocketMQ name server " + nameServerAddress()
        + " has no route for topic " + topic + " 30 s after it was created"),
        e -> new EmbeddedServerException("Interrupted while creating topic " + topic, e));
  }

  /** The name server address, {@code 127.0.0.1:port}, for {@code setNamesrvAddr}. */
  public String nameServerAddress() {
    return "127.0.0.1:" + launcher.nameServerPort();
  }

  /** The broker address, {@code 127.0.0.1:port}. */
  public String brokerAddress() {
    return "127.0.0.1:" + launcher.brokerPort();
  }

  /** The broker's name, as clients see it in routes. */
  public String brokerName() {
    return settings.brokerName();
  }

  /** Whether the broker is running now (false between {@link #stopBroker()} and {@link #startBroker()}). */
  public boolean isBrokerRunning() {
    lock.lock();
    try {
      return broker != null;
    } finally {
      lock.unlock();
    }
  }

  /** The settings this server was built with. */
  public Settings settings() {
    return settings;
  }

  /** Stops broker and name server and deletes the store when it was a temporary one. Idempotent. */
  public void stop() {
    lock.lock();
    try {
      if (!started) {
        return;
      }
      if (broker != null) {
        BrokerLauncher.shutdown(broker);
        broker = null;
        awaitUnregistered();
      }
      BrokerLauncher.shutdown(nameServer);
      nameServer = null;
      started = false;
      if (settings.deleteStoreOnStop()) {
        Dirs.deleteQuietly(settings.storeDir());
      }
      LOG.info("RocketMQ stopped");
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    stop();
  }

  private void requireStarted() {
    if (!started) {
      throw new EmbeddedServerException("EmbeddedRocketMQ is not started: call start() first");
    }
  }

  /**
   * Immutable settings of an embedded RocketMQ.
   *
   * @param storeDir the broker store and config directory
   * @param deleteStoreOnStop whether {@link #stop()} deletes {@code storeDir}
   * @param nameServerPort the name server port on 127.0.0.1; 0 for a free one
   * @param brokerPort the broker port on 127.0.0.1 (the broker also opens this port - 2); 0 for free ones
   * @param brokerName the broker name
   * @param clusterName the cluster name
   * @param queuesPerTopic read and write queues of each topic created by {@link #createTopic(String)}
   * @param autoCreateTopics whether the broker creates unknown topics on first send
   * @param transactionCheckInterval how often the broker scans for half messages to check back
   * @param transactionTimeout how old a half message must be before it is checked back
   * @param transactionCheckMax how many check-backs before a half message is discarded
   */
  public record Settings(
      Path storeDir,
      boolean deleteStoreOnStop,
      int nameServerPort,
      int brokerPort,
      String brokerName,
      String clusterName,
      int queuesPerTopic,
      boolean autoCreateTopics,
      Duration transactionCheckInterval,
      Duration transactionTimeout,
      int transactionCheckMax) {
  }

  /** Builds an {@link EmbeddedRocketMQ}; not thread-safe. */
  public static final class Builder {

    private Path storeDir;
    private int nameServerPort;
    private int brokerPort;
    private String brokerName = "converge-broker";
    private String clusterName = "ConvergeCluster";
    private int queuesPerTopic = 4;
    private boolean autoCreateTopics;
    private Duration checkInterval = Duration.ofSeconds(30);
    private Duration transactionTimeout = Duration.ofSeconds(6);
    private int checkMax = 15;

    private Builder() {
    }

    /** The store directory; default a new temporary directory, deleted on {@link #stop()}. */
    public Builder storeDir(Path dir) {
      this.storeDir = Objects.requireNonNull(dir, "storeDir");
      return this;
    }

    /** The name server port on 127.0.0.1; default 0, a free port. */
    public Builder nameServerPort(int port) {
      this.nameServerPort = port;
      return this;
    }

    /** The broker port on 127.0.0.1 (port - 2 is opened too); default 0, free ports. */
    public Builder brokerPort(int port) {
      this.brokerPort = port;
      return this;
    }

    /** The broker name; default {@code converge-broker}. */
    public Builder brokerName(String name) {
      this.brokerName = name;
      return this;
    }

    /** Queues of each created topic; default 4. */
    public Builder queuesPerTopic(int queues) {
      this.queuesPerTopic = queues;
      return this;
    }

    /** Whether unknown topics are created on first send; default false, as in production. */
    public Builder autoCreateTopics(boolean enabled) {
      this.autoCreateTopics = enabled;
      return this;
    }

    /** How often half messages are scanned for check-back; default 30 s (RocketMQ's is 60 s). */
    public Builder transactionCheckInterval(Duration interval) {
      this.checkInterval = interval;
      return this;
    }

    /** The age at which a half message is first checked back; default 6 s (RocketMQ's default). */
    public Builder transactionTimeout(Duration timeout) {
      this.transactionTimeout = timeout;
      return this;
    }

    /** Check-backs before a half message is discarded; default 15 (RocketMQ's default). */
    public Builder transactionCheckMax(int max) {
      this.checkMax = max;
      return this;
    }

    /** Check-back timing for tests: scan every 500 ms, check at 1 s, up to 50 times. */
    public Builder fastTransactionChecks() {
      return transactionCheckInterval(Duration.ofMillis(500))
          .transactionTimeout(Duration.ofSeconds(1))
          .transactionCheckMax(50);
    }

    /**
     * Validates the settings and builds the (not yet started) server.
     *
     * @throws IllegalArgumentException naming the setting and its bad value
     */
    public EmbeddedRocketMQ build() {
      requirePort("nameServerPort", nameServerPort);
      requirePort("brokerPort", brokerPort);
      if (brokerPort != 0 && brokerPort < 1026) {
        throw new IllegalArgumentException(
            "rocketmq.brokerPort must be above 1025 (port - 2 is opened too), but was " + brokerPort);
      }
      if (brokerName == null || !brokerName.matches("[A-Za-z0-9_-]{1,64}")) {
        throw new IllegalArgumentException("rocketmq.brokerName must match [A-Za-z0-9_-]{1,64}, but was " + brokerName);
      }
      if (queuesPerTopic < 1 || queuesPerTopic > 64) {
        throw new IllegalArgumentException(
            "rocketmq.queuesPerTopic must be between 1 and 64, but was " + queuesPerTopic);
      }
      requirePositive("transactionCheckInterval", checkInterval);
      requirePositive("transactionTimeout", transactionTimeout);
      if (checkMax < 1) {
        throw new IllegalArgumentException("rocketmq.transactionCheckMax must be at least 1, but was " + checkMax);
      }
      boolean temporary = storeDir == null;
      Path dir = temporary ? Dirs.temp("converge-rocketmq-") : storeDir;
      return new EmbeddedRocketMQ(new Settings(dir, temporary, nameServerPort, brokerPort, brokerName,
          clusterName, queuesPerTopic, autoCreateTopics, checkInterval, transactionTimeout, checkMax));
    }

    private static void requirePort(String name, int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("rocketmq." + name + " must be between 0 and 65535, but was " + port);
      }
    }

    private static void requirePositive(String name, Duration d) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("rocketmq." + name + " must be positive, but was " + d);
      }
    }
  }
}
