package io.converge.broker.rocketmq;

import io.converge.broker.EmbeddedServerException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.broker.BrokerStartup;
import org.apache.rocketmq.broker.ConfigContext;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.store.config.BrokerRole;

/**
 * One broker of an {@link EmbeddedRocketMQCluster}, in a JVM of its own so that it can be killed: reads its
 * configuration file as {@code mqbroker -c FILE} does ({@code BrokerStartup.configFileToConfigContext}),
 * starts, prints {@value #STARTED}, then obeys its standard input: {@code stop} (a graceful shutdown,
 * exit 0), {@code halt} ({@code Runtime.halt(137)}: no shutdown hook, nothing flushed, as kill -9). The end
 * of its input (the test JVM died) halts it too.
 */
public final class BrokerChildMain {

  /** The line printed once the broker serves. */
  static final String STARTED = "CONVERGE-BROKER-STARTED";

  private BrokerChildMain() {
  }

  /**
   * Reads the configuration file {@code path} as {@code mqbroker -c} does and starts its broker in this JVM.
   *
   * @throws EmbeddedServerException when the broker does not initialize
   */
  static BrokerController start(String path) throws Exception {
    System.setProperty(RemotingCommand.REMOTING_VERSION_KEY, Integer.toString(MQVersion.CURRENT_VERSION));
    ConfigContext config = BrokerStartup.configFileToConfigContext(path);
    // as BrokerStartup.buildBrokerController, without its exits and its reset of the listen and HA ports
    if (!config.getBrokerConfig().isEnableControllerMode()
        && config.getMessageStoreConfig().getBrokerRole() != BrokerRole.SLAVE) {
      config.getBrokerConfig().setBrokerId(MixAll.MASTER_ID);
    }
    config.getAuthConfig().setConfigName(config.getBrokerConfig().getBrokerName());
    config.getAuthConfig().setClusterName(config.getBrokerConfig().getBrokerClusterName());
    config.getAuthConfig().setAuthConfigPath(config.getMessageStoreConfig().getStorePathRootDir() + "/config");
    BrokerController broker = new BrokerController(config.getBrokerConfig(), config.getNettyServerConfig(),
        config.getNettyClientConfig(), config.getMessageStoreConfig(), config.getAuthConfig());
    broker.getConfiguration().registerConfig(config.getProperties());
    if (!broker.initialize()) {
      BrokerLauncher.shutdown(broker);
      throw new EmbeddedServerException("RocketMQ broker of " + path + " failed to initialize its store");
    }
    BrokerLauncher.bindHaToLoopback(broker);
    broker.start();
    return broker;
  }

  /**
   * Starts the broker of the configuration file {@code args[0]}.
   *
   * @param args the configuration file
   */
  public static void main(String[] args) throws Exception {
    long jvmStart = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
    long t0 = System.currentTimeMillis();
    BrokerController broker = start(args[0]);
    System.out.println(STARTED + " " + broker.getBrokerConfig().getBrokerName() + " "
        + broker.getBrokerConfig().getBrokerId() + ": JVM " + (t0 - jvmStart) + " ms, broker "
        + (System.currentTimeMillis() - t0) + " ms");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine();; line = in.readLine()) {
      if ("stop".equals(line)) {
        BrokerLauncher.shutdown(broker);
        System.out.println("CONVERGE-BROKER-STOPPED");
        System.out.flush();
        Runtime.getRuntime().halt(0); // RocketMQ leaves non-daemon threads; the store is closed
      } else if (line == null || "halt".equals(line)) {
        Runtime.getRuntime().halt(137);
      }
    }
  }
}
