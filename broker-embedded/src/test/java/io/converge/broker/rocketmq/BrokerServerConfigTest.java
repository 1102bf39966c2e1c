package io.converge.broker.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.junit.jupiter.api.Test;

/** The embedded broker's server settings ({@link BrokerLauncher#serverConfig}); no server started. */
class BrokerServerConfigTest {

  @Test
  void decodesAndEncodesOnTheNetworkThreadsOfTheLoopback() {
    NettyServerConfig server = BrokerLauncher.serverConfig(10911);

    assertThat(server.isServerNettyWorkerGroupEnable()).as("a second pool between network and processors")
        .isFalse();
    assertThat(server.getBindAddress()).isEqualTo("127.0.0.1");
    assertThat(server.getListenPort()).isEqualTo(10911);
  }
}
