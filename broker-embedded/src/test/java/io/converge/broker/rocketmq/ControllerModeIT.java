package io.converge.broker.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The controller-mode files of {@code ops/deploy/rocketmq/controller} start: a controller from {@code
 * controller-n0.properties} (as a group of one) and broker group a's two replicas, which register with the name
 * server, one of them elected master by the controller. A controller file or replica file that does not work
 * fails here. The failover itself (the master killed, the other replica elected, the open units resolved) is
 * {@code ControllerFailoverIT} of producer-txn, a command ({@code -Dconverge.long=true}).
 */
class ControllerModeIT {

  @Test
  void theControllerFilesStartAndTheControllerElectsAMaster() {
    try (EmbeddedRocketMQCluster cluster = EmbeddedRocketMQCluster.builder()
        .controller("controller/controller-n0.properties")
        .brokerInThisJvm("controller/broker-a-n0.properties").brokerInThisJvm("controller/broker-a-n1.properties")
        .build().start()) {
      // start() returned: both replicas registered with the name server, under ids the controller gave them
      String master = cluster.master("broker-a");
      assertThat(master).as("the replica the controller elected").isIn("broker-a-n0", "broker-a-n1");
      String topic = RocketMQExtension.uniqueTopic("ctrl");
      cluster.createTopic(topic); // on the elected master, routed by the name server
      assertThat(cluster.brokerName(master)).isEqualTo("broker-a");
    }
  }
}
