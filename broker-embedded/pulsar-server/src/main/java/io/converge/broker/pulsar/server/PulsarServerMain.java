package io.converge.broker.pulsar.server;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.bookkeeper.common.allocator.PoolingPolicy;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.pulsar.PulsarClusterMetadataSetup;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.resources.PulsarResources;
import org.apache.pulsar.common.naming.NamespaceName;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.partition.PartitionedTopicMetadata;
import org.apache.pulsar.common.policies.data.ClusterData;
import org.apache.pulsar.common.util.FieldParser;
import org.apache.pulsar.metadata.bookkeeper.BKCluster;

/**
 * The embedded Pulsar process: one bookie, one broker with the transaction coordinator, an in-memory
 * metadata store, everything on 127.0.0.1 with free ports. Started by {@code EmbeddedPulsar} in a
 * child JVM (its classpath differs from RocketMQ's). It prints one line
 * {@code CONVERGE-PULSAR-READY serviceUrl=... httpUrl=...} on stdout when clients can connect, and
 * stops when its standard input closes (the parent died or asked it to stop) or on SIGTERM.
 *
 * <p>With {@code -D}{@value #DURABLE}{@code =true} the metadata and the bookie's data survive the process: started
 * again on the same data directory it recovers, as a restarted broker does.
 *
 * <p>Arguments: the data directory, then broker settings as {@code name=value} with the names of
 * {@code broker.conf} (fields of {@link ServiceConfiguration}); an unknown name stops the start.
 */
public final class PulsarServerMain {

  /** The line prefix the parent waits for. */
  public static final String READY = "CONVERGE-PULSAR-READY";
  private static final String CLUSTER = "converge";
  /**
   * System property: keep the metadata (RocksDB in {@code <data-dir>/metadata}) and the bookie's ledgers, so a
   * process started again on the same data directory (and broker ports) recovers its topics and transactions.
   */
  public static final String DURABLE = "converge.pulsar.durable";
  /** A shutdown that hangs must not leave an orphan process when the parent is already gone. */
  private static final long HALT_AFTER_MS = 20_000;

  private PulsarServerMain() {
  }

  /**
   * Starts the server and blocks until stdin closes; exits with 1 when the start fails, 2 on bad
   * arguments.
   *
   * @param args the data directory, then {@code name=value} broker settings
   */
  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: PulsarServerMain <data-dir> [brokerSetting=value ...]");
      System.exit(2);
    }
    quietJavaUtilLogging();
    boolean durable = Boolean.getBoolean(DURABLE);
    String metadataUrl = durable
        ? "rocksdb://" + Path.of(args[0]).toAbsolutePath().resolve("metadata")
        : "memory://converge-" + UUID.randomUUID();
    ServiceConfiguration conf = configuration(metadataUrl);
    try {
      override(conf, Arrays.copyOfRange(args, 1, args.length));
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
    }
    try {
      run(Path.of(args[0]), conf, durable);
    } catch (Throwable e) {
      // bookie and broker threads are not daemons: without exit a failed start would hang
      System.err.println("Embedded Pulsar failed to start");
      e.printStackTrace();
      System.exit(1);
    }
    System.exit(0); // runs the shutdown hook
  }

  private static void run(Path dataDirArg, ServiceConfiguration conf, boolean durable) throws Exception {
    Path dataDir = Files.createDirectories(dataDirArg);
    String metadataUrl = conf.getMetadataStoreUrl();
    BKCluster bookies = BKCluster.builder()
        .metadataServiceUri(metadataUrl)
        .numBookies(1)
        .bkPort(0)
        .dataDir(dataDir.resolve("bookie").toString())
        .clearOldData(!durable) // durable: the bookie restarts on its ledgers, at the address of its cookie
        .baseServerConfiguration(durable ? durableBookie() : null)
        .build();
    PulsarService broker = new PulsarService(conf);
    Runnable stop = () -> {
      haltAfter(HALT_AFTER_MS);
      try {
        broker.close();
      } catch (Exception e) {
        System.err.println("Pulsar broker did not close cleanly: " + e);
      }
      try {
        bookies.close();
      } catch (Exception e) {
        System.err.println("Bookie did not close cleanly: " + e);
      }
    };
    Runtime.getRuntime().addShutdownHook(new Thread(stop, "converge-pulsar-stop"));
    broker.start();
    createMetadata(broker);
    System.out
        .println(READY + " serviceUrl=" + broker.getBrokerServiceUrl() + " httpUrl=" + broker.getWebServiceAddress());
    System.out.flush();
    awaitEndOfInput(System.in);
  }

  /**
   * BKCluster's bookie settings, but with the journal written ({@code journalWriteData}, which BKCluster turns
   * off): without it the bookie acknowledges an entry that is only in its write cache, and a killed process
   * loses every entry since the last flush (a minute) while the metadata store still lists them. After a
   * restart the transaction coordinator had then forgotten its transactions and handed out their ids again,
   * the topics' transaction buffers met missing entries, and a unit committed after the restart could stay
   * unreadable. The journal is not fsynced: what it must survive is a killed process (the page cache lives
   * on), as a broker crash, not the loss of the machine.
   */
  static ServerConfiguration durableBookie() {
    ServerConfiguration c = new ServerConfiguration();
    c.setTLSEnabledProtocols("TLSv1.2,TLSv1.1");
    c.setJournalFlushWhenQueueEmpty(true);
    c.setJournalFormatVersionToWrite(5);
    c.setAllowEphemeralPorts(true);
    c.setJournalWriteData(true);
    c.setJournalSyncData(false);
    c.setProperty("journalPreAllocSizeMB", 1);
    c.setBookiePort(0);
    c.setGcWaitTime(1000);
    c.setDiskUsageThreshold(0.999f);
    c.setDiskUsageWarnThreshold(0.99f);
    c.setAllocatorPoolingPolicy(PoolingPolicy.UnpooledHeap);
    c.setProperty("dbStorage_writeCacheMaxSizeMb", 4);
    c.setProperty("dbStorage_readAheadCacheMaxSizeMb", 4);
    c.setListeningInterface(loopbackInterface());
    c.setAllowLoopback(true);
    return c;
  }

  private static String loopbackInterface() {
    try {
      for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (i.isLoopback()) {
          return i.getName();
        }
      }
    } catch (SocketException e) {
      // the default below
    }
    return "lo";
  }

  /** Applies {@code name=value} settings; refuses names that are not broker settings. */
  static void override(ServiceConfiguration conf, String[] settings) {
    Map<String, String> values = new LinkedHashMap<>();
    for (String setting : settings) {
      int eq = setting.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("broker setting must be name=value, but was " + setting);
      }
      String name = setting.substring(0, eq);
      if (!isSetting(name)) {
        throw new IllegalArgumentException("unknown broker setting " + name
            + " (not a field of " + ServiceConfiguration.class.getName() + ")");
      }
      values.put(name, setting.substring(eq + 1));
    }
    FieldParser.update(values, conf);
  }

  private static boolean isSetting(String name) {
    for (Class<?> c = ServiceConfiguration.class; c != null; c = c.getSuperclass()) {
      for (Field field : c.getDeclaredFields()) {
        if (field.getName().equals(name) && !Modifier.isStatic(field.getModifiers())) {
          return true;
        }
      }
    }
    return false;
  }

  /** Jersey and OpenTelemetry log through java.util.logging, at INFO/WARNING on every start. */
  private static void quietJavaUtilLogging() {
    java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
    root.setLevel(java.util.logging.Level.SEVERE);
    for (java.util.logging.Handler handler : root.getHandlers()) {
      handler.setLevel(java.util.logging.Level.SEVERE);
    }
  }

  private static void haltAfter(long millis) {
    Thread halter = new Thread(() -> {
      try {
        Thread.sleep(millis);
        System.err.println("Embedded Pulsar did not stop within " + millis + " ms: halting");
        Runtime.getRuntime().halt(3);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "converge-pulsar-halt");
    halter.setDaemon(true);
    halter.start();
  }

  private static ServiceConfiguration configuration(String metadataUrl) {
    ServiceConfiguration c = new ServiceConfiguration();
    c.setClusterName(CLUSTER);
    c.setMetadataStoreUrl(metadataUrl);
    c.setConfigurationMetadataStoreUrl(metadataUrl);
    c.setAdvertisedAddress("127.0.0.1");
    c.setBindAddress("127.0.0.1");
    c.setBrokerServicePort(Optional.of(0));
    c.setWebServicePort(Optional.of(0));
    c.setManagedLedgerDefaultEnsembleSize(1);
    c.setManagedLedgerDefaultWriteQuorum(1);
    c.setManagedLedgerDefaultAckQuorum(1);
    c.setDefaultNumberOfNamespaceBundles(1);
    c.setBookkeeperNumberOfChannelsPerBookie(1);
    c.setTransactionCoordinatorEnabled(true);
    c.setSystemTopicEnabled(true);
    c.setTopicLevelPoliciesEnabled(true);
    c.setLoadBalancerEnabled(false);
    c.setFunctionsWorkerEnabled(false);
    c.setWebSocketServiceEnabled(false);
    c.setSuperUserRoles(Set.of("converge"));
    return c;
  }

  /** What {@code pulsar standalone} creates: cluster, tenants, namespaces, the coordinator's topic. */
  private static void createMetadata(PulsarService broker) throws Exception {
    PulsarResources resources = broker.getPulsarResources();
    if (!resources.getClusterResources().clusterExists(CLUSTER)) {
      resources.getClusterResources().createCluster(CLUSTER, ClusterData.builder()
          .serviceUrl(broker.getWebServiceAddress())
          .brokerServiceUrl(broker.getBrokerServiceUrl())
          .build());
    }
    for (String tenant : new String[]{"public", "pulsar"}) {
      PulsarClusterMetadataSetup.createTenantIfAbsent(resources, tenant, CLUSTER);
    }
    PulsarClusterMetadataSetup.createNamespaceIfAbsent(resources, NamespaceName.get("public/default"), CLUSTER);
    PulsarClusterMetadataSetup.createNamespaceIfAbsent(resources, NamespaceName.SYSTEM_NAMESPACE, CLUSTER);
    TopicName assign = TopicName.get("persistent://pulsar/system/transaction_coordinator_assign");
    var topics = resources.getNamespaceResources().getPartitionedTopicResources();
    if (!topics.partitionedTopicExists(assign)) {
      topics.createPartitionedTopic(assign, new PartitionedTopicMetadata(1));
    }
  }

  private static void awaitEndOfInput(InputStream in) {
    byte[] buffer = new byte[64];
    try {
      while (in.read(buffer) >= 0) {
        // the parent writes nothing; only the end of the stream matters
      }
    } catch (IOException e) {
      // a broken pipe means the parent is gone: stop as well
    }
  }
}
