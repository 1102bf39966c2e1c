package io.converge.broker.rocketmq;

import io.converge.broker.internal.Poll;
import io.converge.broker.Dirs;
import io.converge.broker.EmbeddedServerException;
import io.converge.broker.Ports;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.constant.PermName;
import org.apache.rocketmq.common.namesrv.NamesrvConfig;
import org.apache.rocketmq.common.topic.TopicValidator;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.namesrv.NamesrvController;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A RocketMQ 5 cluster on 127.0.0.1 started from the configuration files of {@code ops/deploy/rocketmq}
 * (the ones a platform team starts from): one name server in this JVM ({@code namesrv.properties}) and one
 * broker per file, each in a JVM of its own ({@link BrokerChildMain}) so that it can be
 * {@linkplain #kill(String) killed} ({@code Runtime.halt}, as kill -9), {@linkplain #stop(String) stopped}
 * (graceful shutdown) and {@linkplain #start(String) started again} on its store, individually. A broker
 * that a test only stops can run in this JVM instead ({@link Builder#brokerInThisJvm}), which is cheaper.
 *
 * <p>Of each file only the ports, the store paths, the name-server address and the bind address
 * (loopback) are overridden, plus, when a test asks for it, the transaction check-back timing
 * ({@link Builder#transactionChecks}). A key RocketMQ does not know fails the start (RocketMQ itself would
 * ignore it), and so does a broker that does not come up and register: a file that does not work fails the
 * build.
 *
 * <pre>{@code
 * try (EmbeddedRocketMQCluster cluster = EmbeddedRocketMQCluster.builder()
 *     .broker("2m/broker-a.properties").broker("2m/broker-b.properties").build().start()) {
 *   cluster.createTopic(topic);          // 4 queues on every master
 *   cluster.kill("broker-a");            // the node's name: its file name without .properties
 *   cluster.start("broker-a");           // on the same store and ports
 * }
 * }</pre>
 *
 * <p>Controller mode: {@link Builder#controller} starts a controller in this JVM from a controller file (as a
 * group of one) before the brokers, and the brokers of files with {@code enableControllerMode=true} are
 * given its address; the controller then elects each group's master ({@link #master(String)}).
 *
 * <p>A broker JVM starts in a few seconds (the brokers of {@link #start()} together). Thread-safe.
 */
public final class EmbeddedRocketMQCluster implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedRocketMQCluster.class);
  private static final String LOOPBACK = "127.0.0.1";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private final Path root;
  private final boolean temporary;
  private final int queuesPerBroker;
  private final Map<String, String> timing;
  private final Map<String, BrokerNode> nodes = new LinkedHashMap<>();
  private final Set<String> topics = new CopyOnWriteArraySet<>();
  private final ReentrantLock lock = new ReentrantLock();
  /** The controller of a controller-mode cluster; null without. */
  private final ControllerNode controller;
  private NamesrvController nameServer;
  private int nameServerPort;
  private DefaultMQProducer admin;

  private EmbeddedRocketMQCluster(Builder b, Path root, boolean temporary) {
    this.root = root;
    this.temporary = temporary;
    this.queuesPerBroker = b.queuesPerBroker;
    this.timing = Map.copyOf(b.timing);
    this.controller = b.controllerFile == null ? null
        : new ControllerNode(b.controllerFile, DeployConfig.load(b.controllerFile, DeployConfig.NAMESRV),
            root.resolve("controller"));
    for (Map.Entry<String, Boolean> f : b.files.entrySet()) {
      String file = f.getKey();
      Properties p = DeployConfig.load(file, DeployConfig.BROKER);
      String node = Path.of(file).getFileName().toString().replaceFirst("\\.properties$", "");
      if (nodes.containsKey(node)) {
        throw new IllegalArgumentException("rocketmq.cluster.broker: two files named " + node);
      }
      nodes.put(node, new BrokerNode(node, file, p, root.resolve(node), f.getValue()));
    }
  }

  /** A builder: no broker until {@link Builder#broker(String)}, 4 queues per broker and topic. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Starts the name server, then every broker (together), and waits until each has registered.
   *
   * @return this
   * @throws EmbeddedServerException naming the file or node at fault
   */
  public EmbeddedRocketMQCluster start() {
    lock.lock();
    try {
      if (nameServer != null) {
        return this;
      }
      System.setProperty(RemotingCommand.REMOTING_VERSION_KEY, Integer.toString(MQVersion.CURRENT_VERSION));
      long t0 = System.nanoTime();
      nameServer = startNameServer();
      if (controller != null) {
        controller.start(Duration.ofSeconds(30));
      }
      // the JVMs first, so that they start while the brokers of this JVM do
      nodes.values().stream().filter(n -> !n.inThisJvm()).forEach(n -> n.launch(overrides(n)));
      nodes.values().stream().filter(BrokerNode::inThisJvm).forEach(n -> n.launch(overrides(n)));
      for (BrokerNode node : nodes.values()) {
        node.awaitStarted(START_TIMEOUT);
        awaitRegistered(node);
      }
      admin = new DefaultMQProducer("converge-cluster-admin");
      admin.setNamesrvAddr(nameServerAddress());
      admin.setInstanceName("converge-cluster-admin-" + System.nanoTime());
      admin.start();
      LOG.info("RocketMQ cluster of {} brokers started in {} ms, name server {}", nodes.size(),
          (System.nanoTime() - t0) / 1_000_000, nameServerAddress());
      return this;
    } catch (org.apache.rocketmq.client.exception.MQClientException e) {
      throw new EmbeddedServerException("Cannot start the admin client of the RocketMQ cluster", e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Creates {@code topic} with {@link Builder#queuesPerBroker} queues on every running master (in controller mode
   * on every running replica) and waits until the name server routes it to each master.
   */
  public void createTopic(String topic) {
    Objects.requireNonNull(topic, "topic");
    lock.lock();
    try {
      requireStarted();
      TopicConfig config = new TopicConfig(topic, queuesPerBroker, queuesPerBroker,
          PermName.PERM_READ | PermName.PERM_WRITE);
      List<String> masters = new ArrayList<>();
      for (BrokerNode node : nodes.values()) {
        boolean master = node.isRunning() && isMaster(node);
        // controller mode: on every replica too, as the platform team must: a slave copies its master's topics
        // only every few seconds, and a replica elected before that refuses the topic (TOPIC_NOT_EXIST)
        if (master || (node.isRunning() && node.controllerMode())) {
          admin.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl()
              .createTopic(node.address(), TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC, config, 10_000);
        }
        if (master) {
          masters.add(node.brokerName());
        }
      }
      topics.add(topic);
      awaitRoute(topic, masters);
    } catch (EmbeddedServerException e) {
      throw e;
    } catch (Exception e) {
      throw new EmbeddedServerException("Cannot create topic " + topic + " on the RocketMQ cluster", e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Kills broker {@code node}'s JVM with {@code Runtime.halt} (as kill -9) and waits for its end.
   *
   * @throws IllegalStateException for a broker {@linkplain Builder#brokerInThisJvm in this JVM}
   */
  public void kill(String node) {
    lock.lock();
    try {
      BrokerNode n = node(node);
      if (n.inThisJvm()) {
        throw new IllegalStateException("Broker " + node + " runs in this JVM: it can be stopped, not killed");
      }
      n.end("halt");
    } finally {
      lock.unlock();
    }
  }

  /** Stops broker {@code node} gracefully (it unregisters and closes its store) and waits for its end. */
  public void stop(String node) {
    lock.lock();
    try {
      node(node).end("stop");
    } finally {
      lock.unlock();
    }
  }

  /**
   * Starts broker {@code node} again on its store and ports after {@link #kill} or {@link #stop}, and waits
   * until it has registered and (a master) the name server routes every topic created here to it.
   */
  public void start(String node) {
    lock.lock();
    try {
      requireStarted();
      BrokerNode n = node(node);
      if (n.isRunning()) {
        return;
      }
      n.launch(overrides(n));
      n.awaitStarted(START_TIMEOUT);
      awaitRegistered(n);
      if (isMaster(n)) {
        for (String topic : topics) {
          awaitRoute(topic, List.of(n.brokerName()));
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * The node registered with the name server as the master of broker group {@code brokerName} now (in
   * controller mode the controller elects it), or null when the group has none.
   */
  public String master(String brokerName) {
    BrokerData data = nameServer.getRouteInfoManager().getAllClusterInfo().getBrokerAddrTable().get(brokerName);
    String address = data == null ? null : data.getBrokerAddrs().get(MixAll.MASTER_ID);
    return nodes.values().stream().filter(n -> n.address().equals(address)).map(BrokerNode::name).findFirst()
        .orElse(null);
  }

  /** Whether broker {@code node} runs now. */
  public boolean isRunning(String node) {
    return node(node).isRunning();
  }

  /** The name server address, {@code 127.0.0.1:port}. */
  public String nameServerAddress() {
    return LOOPBACK + ":" + nameServerPort;
  }

  /** Broker {@code node}'s address, {@code 127.0.0.1:port} (the same across restarts). */
  public String brokerAddress(String node) {
    return node(node).address();
  }

  /** Broker {@code node}'s broker name (its group) as clients see it in routes. */
  public String brokerName(String node) {
    return node(node).brokerName();
  }

  /** Everything broker {@code node}'s JVMs printed so far (RocketMQ's warnings and errors), for a failure. */
  public String output(String node) {
    return node(node).output();
  }

  /** Stops every broker and the name server; deletes the stores when they were temporary. Idempotent. */
  @Override
  public void close() {
    lock.lock();
    try {
      if (admin != null) {
        admin.shutdown();
        admin = null;
      }
      // together: a broker of this JVM takes seconds to stop, a broker JVM is halted at once
      List<Thread> stopping = new ArrayList<>();
      for (BrokerNode n : nodes.values()) {
        Thread t = new Thread(() -> n.end("halt"), "converge-cluster-stop-" + n.name());
        t.start();
        stopping.add(t);
      }
      for (Thread t : stopping) {
        try {
          t.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      if (controller != null) {
        controller.stop();
      }
      if (nameServer != null) {
        BrokerLauncher.shutdown(nameServer);
        nameServer = null;
      }
      if (temporary) {
        Dirs.deleteQuietly(root);
      }
    } finally {
      lock.unlock();
    }
  }

  private Map<String, String> overrides(BrokerNode node) {
    Path store = node.dir().resolve("store");
    Map<String, String> o = new LinkedHashMap<>();
    o.put("namesrvAddr", nameServerAddress());
    o.put("brokerIP1", LOOPBACK);
    o.put("brokerIP2", LOOPBACK);
    o.put("listenPort", Integer.toString(node.port()));
    o.put("haListenPort", Integer.toString(node.haPort()));
    o.put("rocketmqHome", node.dir().toString());
    o.put("brokerConfigPath", node.dir().resolve("config").resolve("broker.properties").toString());
    o.put("storePathRootDir", store.toString());
    o.put("storePathCommitLog", store.resolve("commitlog").toString());
    o.put("storePathEpochFile", store.resolve("epochFileCheckpoint").toString());
    o.put("storePathBrokerIdentity", store.resolve("brokerIdentity").toString());
    o.put("storePathDLedgerCommitLog", store.resolve("dledger").toString());
    if (node.controllerMode()) {
      o.put("controllerAddr", requireController(node).address());
    }
    o.putAll(timing);
    return o;
  }

  private NamesrvController startNameServer() {
    Properties p = DeployConfig.load("namesrv.properties", DeployConfig.NAMESRV);
    NamesrvConfig config = new NamesrvConfig();
    NettyServerConfig server = new NettyServerConfig();
    MixAll.properties2Object(p, config);
    MixAll.properties2Object(p, server);
    nameServerPort = Ports.free();
    Path dir = Dirs.requireWritable(root.resolve("namesrv"), "RocketMQ name server");
    return BrokerLauncher.startNameServer(config, server, dir, nameServerPort);
  }

  private void awaitRegistered(BrokerNode node) {
    await("broker " + node.name() + " (" + node.address() + ") to register with the name server", () -> {
      BrokerData data = nameServer.getRouteInfoManager().getAllClusterInfo().getBrokerAddrTable()
          .get(node.brokerName());
      // in controller mode the controller assigns the id (the master registers as 0)
      return data != null && (node.controllerMode() ? data.getBrokerAddrs().containsValue(node.address())
          : node.address().equals(data.getBrokerAddrs().get(node.brokerId())));
    }, node);
  }

  /** Whether {@code node} is registered as its group's master now. */
  private boolean isMaster(BrokerNode node) {
    return node.name().equals(master(node.brokerName()));
  }

  private ControllerNode requireController(BrokerNode node) {
    if (controller == null) {
      throw new EmbeddedServerException("Broker " + node.name() + " is in controller mode: add a controller to"
          + " the cluster (Builder.controller)");
    }
    return controller;
  }

  private void awaitRoute(String topic, List<String> brokerNames) {
    await("a route of topic " + topic + " to " + brokerNames, () -> {
      TopicRouteData route = nameServer.getRouteInfoManager().pickupTopicRouteData(topic);
      return route != null && route.getQueueDatas().stream().map(QueueData::getBrokerName).toList()
          .containsAll(brokerNames);
    }, null);
  }

  private static void await(String what, java.util.function.BooleanSupplier done, BrokerNode node) {
    Supplier<EmbeddedServerException> timedOut = () -> new EmbeddedServerException("Timed out waiting for " + what
        + (node == null ? "" : "; its output:\n" + node.output()));
    Poll.until(Duration.ofSeconds(30), Poll.EVERY, () -> {
      if (done.getAsBoolean()) {
        return true;
      }
      if (node != null && !node.isRunning()) {
        throw timedOut.get();
      }
      return false;
    }, timedOut, e -> new EmbeddedServerException("Interrupted waiting for " + what, e));
  }

  private BrokerNode node(String name) {
    BrokerNode n = nodes.get(name);
    if (n == null) {
      throw new IllegalArgumentException("No broker " + name + " in this cluster; its brokers: " + nodes.keySet());
    }
    return n;
  }

  private void requireStarted() {
    if (nameServer == null) {
      throw new EmbeddedServerException("EmbeddedRocketMQCluster is not started: call start() first");
    }
  }

  /** Builds an {@link EmbeddedRocketMQCluster}; not thread-safe. */
  public static final class Builder {

    private final Map<String, Boolean> files = new LinkedHashMap<>();
    private final Map<String, String> timing = new LinkedHashMap<>();
    private Path storeDir;
    private String controllerFile;
    private int queuesPerBroker = 4;

    private Builder() {
    }

    /**
     * A broker started from {@code file}, relative to {@code ops/deploy/rocketmq} (e.g.
     * {@code 2m/broker-a.properties}); its node name is the file name without {@code .properties}.
     */
    public Builder broker(String file) {
      files.put(Objects.requireNonNull(file, "file"), false);
      return this;
    }

    /**
     * As {@link #broker(String)}, but the broker runs in this JVM: it starts faster (no JVM to start, the
     * broker's classes shared with the test) and can be {@linkplain #stop(String) stopped}, not killed.
     */
    public Builder brokerInThisJvm(String file) {
      files.put(Objects.requireNonNull(file, "file"), true);
      return this;
    }

    /**
     * A controller in this JVM started from {@code file} (relative to {@code ops/deploy/rocketmq}, e.g.
     * {@code controller/controller-n0.properties}) as a group of one; the brokers of files with
     * {@code enableControllerMode=true} are given its address. Started before the brokers.
     */
    public Builder controller(String file) {
      this.controllerFile = Objects.requireNonNull(file, "file");
      return this;
    }

    /** The directory of the stores; default a new temporary directory, deleted on {@link #close()}. */
    public Builder storeDir(Path dir) {
      this.storeDir = Objects.requireNonNull(dir, "storeDir");
      return this;
    }

    /** Read and write queues of each topic on each master; default 4. */
    public Builder queuesPerBroker(int queues) {
      if (queues < 1 || queues > 64) {
        throw new IllegalArgumentException("rocketmq.cluster.queuesPerBroker must be between 1 and 64, but was "
            + queues);
      }
      this.queuesPerBroker = queues;
      return this;
    }

    /**
     * Overrides the files' check-back timing (a test cannot wait the production 30 s): scan every
     * {@code interval}, first check at {@code timeout}, at most {@code max} checks; the op batch interval
     * becomes a tenth of the shorter of the two (the files' ratio), at least 10 ms.
     */
    public Builder transactionChecks(Duration interval, Duration timeout, int max) {
      if (interval.isNegative() || interval.isZero() || timeout.isNegative() || timeout.isZero() || max < 1) {
        throw new IllegalArgumentException("rocketmq.cluster.transactionChecks must be positive, but was "
            + interval + ", " + timeout + ", " + max);
      }
      timing.put("transactionCheckInterval", Long.toString(interval.toMillis()));
      timing.put("transactionTimeOut", Long.toString(timeout.toMillis()));
      timing.put("transactionCheckMax", Integer.toString(max));
      timing.put("transactionOpBatchInterval",
          Long.toString(Math.max(10, Math.min(interval.toMillis(), timeout.toMillis()) / 10)));
      return this;
    }

    /** Builds the (not yet started) cluster; a file missing or with an unknown key fails here. */
    public EmbeddedRocketMQCluster build() {
      if (files.isEmpty()) {
        throw new IllegalArgumentException("rocketmq.cluster: no broker; add one with broker(file)");
      }
      boolean temporary = storeDir == null;
      Path dir = temporary ? Dirs.temp("converge-rocketmq-cluster-") : storeDir;
      return new EmbeddedRocketMQCluster(this, dir, temporary);
    }
  }
}
