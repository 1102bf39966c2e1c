package io.converge.broker.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingClient;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The embedded broker answers a request in the request's own encoding (binary or JSON), see {@link BrokerLauncher}. */
@ExtendWith(RocketMQExtension.class)
class BrokerAnswerEncodingIT {

  private NettyRemotingClient client;

  @BeforeEach
  void start() {
    client = new NettyRemotingClient(new NettyClientConfig());
    client.start();
  }

  @AfterEach
  void stop() {
    client.shutdown();
  }

  @ParameterizedTest
  @EnumSource(SerializeType.class)
  void answersInTheEncodingOfTheRequest(SerializeType encoding, EmbeddedRocketMQ mq) throws Exception {
    // not GET_BROKER_RUNTIME_INFO: RocketMQ fails it (StoreStatsService) until the store's first statistics sample
    RemotingCommand request = RemotingCommand.createRequestCommand(RequestCode.GET_BROKER_CONFIG, null);
    request.setSerializeTypeCurrentRPC(encoding);

    RemotingCommand response = client.invokeSync(mq.brokerAddress(), request, 5_000);

    assertThat(response.getCode()).isEqualTo(ResponseCode.SUCCESS);
    assertThat(response.getSerializeTypeCurrentRPC()).isEqualTo(encoding);
  }
}
