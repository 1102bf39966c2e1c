package io.converge.ops.doctor;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.impl.ClientRemotingProcessor;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;

/**
 * The RocketMQ checks of {@code converge doctor}, through the admin calls of {@code rocketmq-client} (the ones
 * {@code mqadmin clusterList}, {@code getBrokerConfig} and {@code topicRoute} use): every broker's transaction
 * settings against the producers' ({@link RocketMQRules}), and the topics' routes. Reads only. Not thread-safe.
 */
final class RocketMQDoctor {

  private static final long TIMEOUT_MS = 5_000;

  private final String nameServer;
  private final RocketMQRules.Producer producer;
  private final List<String> topics;
  private final int minQueues;

  RocketMQDoctor(String nameServer, RocketMQRules.Producer producer, List<String> topics, int minQueues) {
    this.nameServer = nameServer;
    this.producer = producer;
    this.topics = topics;
    this.minQueues = minQueues;
  }

  /** Runs the checks, reporting each finding to {@code out}. */
  void run(Consumer<Finding> out) {
    ClientConfig config = new ClientConfig();
    config.setNamesrvAddr(nameServer);
    MQClientAPIImpl api = new MQClientAPIImpl(new NettyClientConfig(), new ClientRemotingProcessor(null), null, config);
    api.updateNameServerAddressList(nameServer);
    api.start();
    try {
      ClusterInfo cluster;
      try {
        cluster = api.getBrokerClusterInfo(TIMEOUT_MS);
      } catch (Exception e) {
        out.accept(Finding.fail("rocketmq.connect", "name server " + nameServer + " did not answer: " + describe(e),
            "check --namesrv (host:port;host:port) and that the name servers run"));
        return;
      }
      Map<String, BrokerData> groups = cluster.getBrokerAddrTable();
      if (groups == null || groups.isEmpty()) {
        out.accept(Finding.fail("rocketmq.connect", "name server " + nameServer + " knows no broker",
            "start the brokers with namesrvAddr=" + nameServer));
        return;
      }
      out.accept(Finding.pass("rocketmq.connect", "name server " + nameServer + ": broker groups " + groups.keySet()));
      for (BrokerData group : groups.values()) {
        group.getBrokerAddrs().forEach((id, address) -> broker(api, group.getBrokerName() + (id == 0 ? "" : "-" + id),
            address, out));
      }
      for (String topic : topics) {
        topic(api, topic, groups.size(), out);
      }
    } finally {
      api.shutdown();
    }
  }

  private void broker(MQClientAPIImpl api, String name, String address, Consumer<Finding> out) {
    Properties config;
    try {
      config = api.getBrokerConfig(address, TIMEOUT_MS);
    } catch (Exception e) {
      out.accept(Finding.fail("rocketmq." + name + ".config", "broker " + name + " at " + address
          + " did not return its configuration: " + describe(e), "check that the broker runs and is reachable"));
      return;
    }
    RocketMQRules.check(name, config, producer, out);
  }

  private void topic(MQClientAPIImpl api, String topic, int groups, Consumer<Finding> out) {
    List<Integer> queues = new ArrayList<>();
    try {
      TopicRouteData route = api.getTopicRouteInfoFromNameServer(topic, TIMEOUT_MS);
      for (QueueData q : route.getQueueDatas()) {
        boolean writable = (q.getPerm() & 2) != 0;
        queues.add(writable ? q.getWriteQueueNums() : 0);
      }
      queues.removeIf(n -> n == 0);
    } catch (MQClientException e) {
      if (e.getResponseCode() != ResponseCode.TOPIC_NOT_EXIST) {
        out.accept(Finding.fail("rocketmq.topic." + topic, "route of " + topic + " unreadable: " + describe(e),
            "check the name servers"));
        return;
      }
    } catch (Exception e) {
      out.accept(Finding.fail("rocketmq.topic." + topic, "route of " + topic + " unreadable: " + describe(e),
          "check the name servers"));
      return;
    }
    RocketMQRules.topic(topic, queues, groups, minQueues, out);
  }

  private static String describe(Exception e) {
    return e.getClass().getSimpleName() + ": " + e.getMessage();
  }
}
