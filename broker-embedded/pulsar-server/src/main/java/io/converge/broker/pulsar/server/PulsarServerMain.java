package io.converge.broker.pulsar.server;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.pulsar.PulsarClusterMetadataSetup;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.resources.PulsarResources;
import org.apache.pulsar.common.naming.NamespaceName;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.partition.PartitionedTopicMetadata;
import org.apache.pulsar.common.policies.data.ClusterData;
import org.apache.pulsar.metadata.bookkeeper.BKCluster;

/**
 * The embedded Pulsar process: one bookie, one broker with the transaction coordinator, an in-memory
 * metadata store, everything on 127.0.0.1 with free ports. Started by {@code EmbeddedPulsar} in a
 * child JVM (its classpath differs from RocketMQ's). It prints one line
 * {@code CONVERGE-PULSAR-READY serviceUrl=... httpUrl=...} on stdout when clients can connect, and
 * stops when its standard input closes (the parent died or asked it to stop) or on SIGTERM.
 *
 * <p>Arguments: the data directory.
 */
public final class PulsarServerMain {

  /** The line prefix the parent waits for. */
  public static final String READY = "CONVERGE-PULSAR-READY";
  private static final String CLUSTER = "converge";
  /** A shutdown that hangs must not leave an orphan process when the parent is already gone. */
  private static final long HALT_AFTER_MS = 20_000;

  private PulsarServerMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: PulsarServerMain <data-dir>");
      System.exit(2);
    }
    quietJavaUtilLogging();
    Path dataDir = Files.createDirectories(Path.of(args[0]));
    String metadataUrl = "memory://converge-" + UUID.randomUUID();
    BKCluster bookies = BKCluster.builder()
        .metadataServiceUri(metadataUrl)
        .numBookies(1)
        .bkPort(0)
        .dataDir(dataDir.resolve("bookie").toString())
        .clearOldData(true)
        .build();
    PulsarService broker = new PulsarService(configuration(metadataUrl));
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
    System.out.println(READY + " serviceUrl=" + broker.getBrokerServiceUrl() + " httpUrl=" + broker.getWebServiceAddress());
    System.out.flush();
    awaitEndOfInput(System.in);
    System.exit(0); // runs the shutdown hook
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
    for (String tenant : new String[] {"public", "pulsar"}) {
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
