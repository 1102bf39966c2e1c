package io.converge.broker.rocketmq;

import io.converge.broker.internal.Poll;
import io.converge.broker.EmbeddedServerException;
import io.converge.broker.Ports;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.broker.processor.PopMessageProcessor;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.ServiceThread;
import org.apache.rocketmq.common.namesrv.NamesrvConfig;
import org.apache.rocketmq.namesrv.NamesrvController;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingAbstract;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.MessageStore;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.ha.HAService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds the RocketMQ configurations and starts/stops the controllers. Not thread-safe (guarded by its owner). */
final class BrokerLauncher {

  private static final Logger LOG = LoggerFactory.getLogger(BrokerLauncher.class);
  private static final String LOOPBACK = "127.0.0.1";
  /** The timer wheel's flush interval: RocketMQ's default is 1 s. */
  static final int TIMER_FLUSH_INTERVAL_MS = 60_000;
  /** The transaction metrics' flush interval, also how long their service spins at start: RocketMQ's is 10 s. */
  static final long TRANSACTION_METRIC_FLUSH_INTERVAL_MS = 1_000;

  private final EmbeddedRocketMQ.Settings settings;
  private int nameServerPort;
  private int brokerPort;

  BrokerLauncher(EmbeddedRocketMQ.Settings settings) {
    this.settings = settings;
  }

  int nameServerPort() {
    return nameServerPort;
  }

  int brokerPort() {
    return brokerPort;
  }

  NamesrvController startNameServer() {
    nameServerPort = settings.nameServerPort() == 0 ? Ports.free() : settings.nameServerPort();
    Ports.requireFree(nameServerPort, "RocketMQ name server");
    return startNameServer(new NamesrvConfig(), new NettyServerConfig(), settings.storeDir().resolve("namesrv"),
        nameServerPort);
  }

  /**
   * Starts a name server on 127.0.0.1:{@code port} with its files in {@code dir} and the other settings of
   * {@code config} and {@code server}; shut down again when it fails to start. Used by the cluster too.
   */
  static NamesrvController startNameServer(NamesrvConfig config, NettyServerConfig server, Path dir, int port) {
    config.setRocketmqHome(dir.toString());
    config.setKvConfigPath(dir.resolve("kvConfig.json").toString());
    config.setConfigStorePath(dir.resolve("namesrv.properties").toString());
    server.setBindAddress(LOOPBACK);
    server.setListenPort(port);
    NamesrvController controller = new NamesrvController(config, server, new NettyClientConfig());
    try {
      if (!controller.initialize()) {
        throw new EmbeddedServerException("RocketMQ name server failed to initialize on port " + port);
      }
      controller.start();
      return controller;
    } catch (EmbeddedServerException e) {
      controller.shutdown();
      throw e;
    } catch (Exception e) {
      controller.shutdown();
      throw new EmbeddedServerException("RocketMQ name server failed to start on 127.0.0.1:" + port, e);
    }
  }

  /**
   * Answers a request in its own encoding: RocketMQ answers every request in JSON by default (a JVM-wide setting),
   * and the JSON encoding of the answers to a unit of work's half message and END, and their decoding in the client,
   * were about 3.5% of the CPU of a RocketMQ unit in the bench (JFR, issue 15). A client sending binary headers
   * (Converge's transactional one) gets binary answers; a JSON client still gets JSON.
   */
  static final RPCHook ANSWER_IN_REQUEST_ENCODING = new RPCHook() {

    @Override
    public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
      // nothing: the request is decoded in whatever encoding it came
    }

    @Override
    public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
      if (request != null && response != null) {
        response.setSerializeTypeCurrentRPC(request.getSerializeTypeCurrentRPC());
      }
    }
  };

  /**
   * The broker's server on {@code port} of the loopback: its requests are decoded, and its answers encoded, on the
   * network threads, not handed to a second pool of eight threads first (RocketMQ's default): two thread switches
   * less per request. The processors run on their own pools either way. {@code converge bench
   * txn-producer-rocketmq:pg-insert}, with and without, back to back on a quiet machine, 4-5 runs each: median
   * 0.31 (0.20-0.34) against 0.24 (0.22-0.26) at 1 thread, 0.24 against 0.235 at 8: a small gain at 1 thread, within
   * the machine's noise at 8 (issue 15).
   */
  static NettyServerConfig serverConfig(int port) {
    NettyServerConfig server = new NettyServerConfig();
    server.setBindAddress(LOOPBACK);
    server.setListenPort(port);
    server.setServerNettyWorkerGroupEnable(false);
    return server;
  }

  BrokerController startBroker() {
    if (brokerPort == 0) {
      brokerPort = settings.brokerPort() == 0 ? Ports.freeWithCompanion(2) : settings.brokerPort();
    }
    Ports.requireFree(brokerPort, "RocketMQ broker");
    Ports.requireFree(brokerPort - 2, "RocketMQ broker (fast channel = listen port - 2)");
    BrokerController controller = new BrokerController(brokerConfig(), serverConfig(brokerPort),
        new NettyClientConfig(),
        storeConfig());
    try {
      if (!controller.initialize()) {
        throw new EmbeddedServerException("RocketMQ broker failed to initialize its store in " + settings.storeDir());
      }
      bindHaToLoopback(controller);
      controller.registerServerRPCHook(ANSWER_IN_REQUEST_ENCODING);
      controller.start();
      return controller;
    } catch (EmbeddedServerException e) {
      shutdown(controller);
      throw e;
    } catch (Exception e) {
      shutdown(controller);
      throw new EmbeddedServerException("RocketMQ broker failed to start on 127.0.0.1:" + brokerPort, e);
    }
  }

  static void shutdown(BrokerController controller) {
    long t0 = System.nanoTime();
    MessageStore store = controller.getMessageStore();
    stopIdleThreads(controller);
    controller.shutdown();
    // 5.4.0 does not stop two schedulers, non-daemon threads that would keep the JVM alive
    if (store instanceof DefaultMessageStore defaultStore && defaultStore.getCompactionStore() != null) {
      defaultStore.getCompactionStore().shutdown();
    }
    if (store != null && store.getMessageRocksDBStorage() != null) {
      try {
        Object scheduler = field(store.getMessageRocksDBStorage().getClass(), "scheduler")
            .get(store.getMessageRocksDBStorage());
        if (scheduler instanceof ExecutorService executor) {
          executor.shutdownNow();
        }
      } catch (ReflectiveOperationException e) {
        LOG.warn("Could not stop the RocksDB scheduler of the RocketMQ store; the JVM may not exit: {}", e.toString());
      }
    }
    LOG.debug("RocketMQ broker stopped in {} ms", (System.nanoTime() - t0) / 1_000_000);
  }

  /** Stops the name server (its idle network threads first, see {@link #stopIdleThreads}). */
  static void shutdown(NamesrvController controller) {
    stopIdleThreads(List.of(), Arrays.asList(controller.getRemotingServer(), controller.getRemotingClient()));
    controller.shutdown();
  }

  private static void stopIdleThreads(BrokerController controller) {
    List<ServiceThread> waking = new ArrayList<>();
    List<Object> interruptible = new ArrayList<>();
    PopMessageProcessor pop = controller.getPopMessageProcessor();
    if (pop != null) {
      interruptible.add(pop.getPopBufferMergeService());
    }
    if (controller.getAckMessageProcessor() != null
        && controller.getAckMessageProcessor().getPopReviveServices() != null) {
      waking.addAll(Arrays.asList(controller.getAckMessageProcessor().getPopReviveServices()));
    }
    interruptible.add(controller.getRemotingServer());
    interruptible.add(controller.getFastRemotingServer());
    interruptible
        .add(controller.getBrokerOuterAPI() == null ? null : controller.getBrokerOuterAPI().getRemotingClient());
    stopIdleThreads(waking, interruptible);
  }

  /**
   * RocketMQ's shutdown joins its service threads one after the other, and an idle one looks at its stop flag
   * only after its current wait: the network event threads poll their queue for 3 s, the pop buffer sleeps
   * 2 s after its loop, each of the 8 pop revive threads waits up to 3 s (twice per loop, one wake-up
   * each). That was about 6 s of every broker stop. These threads are all told to stop first and woken until
   * they end, together; RocketMQ's shutdown then finds them stopped. Only threads that do no file I/O are
   * interrupted (an interrupt would close a file channel in use), and only out of {@code waitForRunning}: the
   * network event threads (services of {@code interruptible} remoting clients and servers) and the pop buffer.
   * The store's threads are left to RocketMQ.
   *
   * @param waking services stopped and woken, never interrupted
   * @param interruptible services, or remoting clients and servers whose event thread is stopped, also interrupted
   */
  private static void stopIdleThreads(List<ServiceThread> waking, List<Object> interruptible) {
    try {
      Field threadField = field(ServiceThread.class, "thread");
      Map<ServiceThread, Boolean> services = new LinkedHashMap<>();
      waking.forEach(s -> services.put(s, false));
      for (Object o : interruptible) {
        if (o instanceof NettyRemotingAbstract remoting) {
          services.put((ServiceThread) field(NettyRemotingAbstract.class, "nettyEventExecutor").get(remoting), true);
        } else if (o instanceof ServiceThread service) {
          services.put(service, true);
        }
      }
      Map<Thread, ServiceThread> threads = new LinkedHashMap<>();
      for (ServiceThread service : services.keySet()) {
        if (service != null && threadField.get(service) instanceof Thread thread) {
          service.makeStop();
          threads.put(thread, service);
        }
      }
      Poll.until(Duration.ofSeconds(5), Poll.EVERY, () -> {
        threads.keySet().removeIf(t -> !t.isAlive());
        threads.forEach((thread, service) -> {
          service.wakeup();
          if (services.get(service) && !inWaitForRunning(thread)) {
            thread.interrupt();
          }
        });
        return threads.isEmpty();
      });
    } catch (ReflectiveOperationException e) {
      LOG.debug("RocketMQ's idle service threads are left to its shutdown (slower): {}", e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Whether {@code thread} waits in {@code ServiceThread.waitForRunning}: a wake-up ends it, an interrupt is logged as an error. */
  private static boolean inWaitForRunning(Thread thread) {
    for (StackTraceElement frame : thread.getStackTrace()) {
      if (frame.getMethodName().equals("waitForRunning")
          && frame.getClassName().equals(ServiceThread.class.getName())) {
        return true;
      }
    }
    return false;
  }

  private BrokerConfig brokerConfig() {
    BrokerConfig config = new BrokerConfig();
    Path dir = settings.storeDir();
    config.setRocketmqHome(dir.toString());
    config.setBrokerConfigPath(dir.resolve("config").resolve("broker.properties").toString());
    config.setNamesrvAddr(LOOPBACK + ":" + nameServerPort);
    config.setBrokerIP1(LOOPBACK);
    config.setBrokerIP2(LOOPBACK);
    config.setBrokerName(settings.brokerName());
    config.setBrokerClusterName(settings.clusterName());
    config.setBrokerId(MixAll.MASTER_ID);
    config.setListenPort(brokerPort);
    config.setAutoCreateTopicEnable(settings.autoCreateTopics());
    config.setAutoCreateSubscriptionGroup(true);
    config.setEnablePropertyFilter(true);
    // The embedded broker shares its CPU with the application and the tests: RocketMQ's 200 ms default
    // turns a stall of a loaded machine into TIMEOUT_CLEAN_QUEUE ("broker busy") refusals of whole bursts.
    config.setWaitTimeMillsInSendQueue(2_000);
    config.setWaitTimeMillsInTransactionQueue(2_000);
    long interval = settings.transactionCheckInterval().toMillis();
    long timeout = settings.transactionTimeout().toMillis();
    config.setTransactionCheckInterval(interval);
    config.setTransactionTimeOut(timeout);
    config.setTransactionCheckMax(settings.transactionCheckMax());
    // The op-message batch must be written well before the next scan, else a committed half message
    // is checked again and delivered several times (seen up to 6 with the 3 s default).
    config.setTransactionOpBatchInterval((int) Math.max(10, Math.min(3000, Math.min(interval, timeout) / 10)));
    // RocketMQ 5.4.0's TransactionMetricsFlushService spins on the clock until its first flush (default 10 s): a core
    // busy for the first seconds of every broker. It then sleeps this long between flushes of a small file.
    config.setTransactionMetricFlushInterval(TRANSACTION_METRIC_FLUSH_INTERVAL_MS);
    return config;
  }

  private MessageStoreConfig storeConfig() {
    MessageStoreConfig config = new MessageStoreConfig();
    Path root = settings.storeDir().resolve("store");
    config.setStorePathRootDir(root.toString());
    config.setStorePathCommitLog(root.resolve("commitlog").toString());
    config.setStorePathEpochFile(root.resolve("epochFileCheckpoint").toString());
    config.setStorePathBrokerIdentity(root.resolve("brokerIdentity").toString());
    config.setStorePathDLedgerCommitLog(root.resolve("dledger").toString());
    // the defaults map 2.5 GB of files; these keep a test broker at a few dozen MB
    config.setMappedFileSizeCommitLog(16 * 1024 * 1024);
    config.setMappedFileSizeConsumeQueue(200_000);
    config.setMappedFileSizeTimerLog(4 * 1024 * 1024);
    // The index answers FailedEnds' look-up of a real message by its unique key: kept, but 400,000 entries per
    // file (8 MB) so that a loaded broker (about 3 entries per unit of work) no longer rolls a file every few seconds
    config.setMaxHashSlotNum(100_000);
    config.setMaxIndexNum(400_000);
    // The timer wheel (timer messages, POP revive; retry delay levels use the schedule topic instead) is flushed by
    // comparing its whole 7-day wheel (tens of MB) byte by byte, every second by default: 12-34% of the CPU samples
    // of a loaded embedded broker (converge bench, JFR). Timer messages work the same with a rarer flush; it is a
    // checkpoint, so a restart after a crash replays a longer stretch of the timer log.
    config.setTimerFlushIntervalMs(TIMER_FLUSH_INTERVAL_MS);
    config.setHaListenPort(0);
    config.setDiskMaxUsedSpaceRatio(95);
    config.setDiskSpaceWarningLevelRatio(98);
    config.setDiskSpaceCleanForciblyRatio(97);
    config.setEnableRocksDBLog(false);
    return config;
  }

  /** The HA service binds 0.0.0.0 and has no setting for it: point its listen address at loopback. */
  static void bindHaToLoopback(BrokerController controller) {
    HAService ha = controller.getMessageStore() == null ? null : controller.getMessageStore().getHaService();
    if (ha == null) {
      return;
    }
    try {
      Object acceptService = field(ha.getClass(), "acceptSocketService").get(ha);
      if (acceptService == null) {
        return;
      }
      Field listen = field(acceptService.getClass(), "socketAddressListen");
      InetSocketAddress current = (InetSocketAddress) listen.get(acceptService);
      listen.set(acceptService, new InetSocketAddress(InetAddress.getByName(LOOPBACK), current.getPort()));
    } catch (ReflectiveOperationException | java.net.UnknownHostException e) {
      LOG.warn("Could not bind the RocketMQ HA service to loopback; it listens on all interfaces: {}", e.toString());
    }
  }

  private static Field field(Class<?> type, String name) throws NoSuchFieldException {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      try {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f;
      } catch (NoSuchFieldException e) {
        // look in the superclass
      }
    }
    throw new NoSuchFieldException(type.getName() + "." + name);
  }
}
