package io.converge.broker.rocketmq;

import io.converge.broker.internal.Poll;
import io.converge.broker.Dirs;
import io.converge.broker.EmbeddedServerException;
import io.converge.broker.Ports;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.apache.rocketmq.common.ControllerConfig;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.controller.ControllerManager;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;

/**
 * The RocketMQ controller of an {@link EmbeddedRocketMQCluster} in controller mode, in this JVM: started from
 * a controller file of {@code ops/deploy/rocketmq} as {@code mqcontroller -c FILE} does, as a group of one
 * (its {@code controllerDLegerPeers} become this node alone on a free loopback port, which is also the
 * address brokers reach it at), its store in the cluster's directory. Guarded by the cluster's lock.
 */
final class ControllerNode {

  private final String file;
  private final Properties config;
  private final Path dir;
  private final int port;
  private ControllerManager manager;

  ControllerNode(String file, Properties config, Path dir) {
    this.file = file;
    this.config = config;
    this.dir = dir;
    this.port = Ports.free();
  }

  /** The address brokers give as {@code controllerAddr}: the controller's own peer address. */
  String address() {
    return "127.0.0.1:" + port;
  }

  /** Starts the controller and waits until it leads its group of one (it then answers brokers). */
  void start(Duration timeout) {
    Ports.requireFree(port, "RocketMQ controller of " + file);
    Dirs.requireWritable(dir, "RocketMQ controller");
    Properties p = new Properties();
    p.putAll(config);
    String self = config.getProperty("controllerDLegerSelfId", "n0");
    p.setProperty("controllerDLegerSelfId", self);
    p.setProperty("controllerDLegerPeers", self + "-" + address());
    p.setProperty("controllerStorePath", dir.resolve("store").toString());
    p.setProperty("rocketmqHome", dir.toString());
    p.setProperty("configStorePath", dir.resolve("controller.properties").toString());
    ControllerConfig controllerConfig = new ControllerConfig();
    NettyServerConfig server = new NettyServerConfig();
    NettyClientConfig client = new NettyClientConfig();
    MixAll.properties2Object(p, controllerConfig);
    MixAll.properties2Object(p, server);
    MixAll.properties2Object(p, client);
    server.setListenPort(port);
    ControllerManager m = new ControllerManager(controllerConfig, server, client);
    m.getConfiguration().registerConfig(p);
    try {
      if (!m.initialize()) {
        throw new EmbeddedServerException("RocketMQ controller of ops/deploy/rocketmq/" + file
            + " failed to initialize");
      }
      m.start();
    } catch (EmbeddedServerException e) {
      m.shutdown();
      throw e;
    } catch (Exception e) {
      m.shutdown();
      throw new EmbeddedServerException("RocketMQ controller of ops/deploy/rocketmq/" + file + " failed to start", e);
    }
    manager = m;
    Poll.until(timeout, Poll.EVERY, () -> m.getController().isLeaderState(),
        () -> new EmbeddedServerException("RocketMQ controller of ops/deploy/rocketmq/" + file
            + " did not become leader of its group within " + timeout),
        e -> new EmbeddedServerException("Interrupted waiting for the RocketMQ controller", e));
  }

  /** Stops the controller; idempotent. */
  void stop() {
    if (manager != null) {
      manager.shutdown();
      manager = null;
    }
  }
}
