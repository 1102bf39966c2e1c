package io.converge.broker.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.EmbeddedServerException;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * Every RocketMQ configuration of {@code ops/deploy/rocketmq} (including those no test
 * starts) names only settings RocketMQ 5.4.0 has: RocketMQ would silently ignore a misspelt one.
 */
class DeployConfigTest {

  static final List<String> BROKERS = List.of("2m/broker-a.properties", "2m/broker-b.properties",
      "2m-2s-sync/broker-a.properties", "2m-2s-sync/broker-a-s.properties", "2m-2s-sync/broker-b.properties",
      "2m-2s-sync/broker-b-s.properties", "controller/broker-a-n0.properties", "controller/broker-a-n1.properties");

  @Test
  void everyFileNamesOnlySettingsOfRocketMQ() {
    for (String file : BROKERS) {
      Properties p = DeployConfig.load(file, DeployConfig.BROKER);
      assertThat(p.getProperty("autoCreateTopicEnable")).as(file).isEqualTo("false");
      assertThat(p.getProperty("enableSlaveActingMaster", "false")).as(file).isEqualTo("false");
    }
    assertThat(DeployConfig.load("namesrv.properties", DeployConfig.NAMESRV)).containsKey("listenPort");
    assertThat(DeployConfig.load("controller/controller-n0.properties", DeployConfig.NAMESRV))
        .containsEntry("enableElectUncleanMaster", "false");
  }

  @Test
  void aMisspeltKeyIsRefusedByName() {
    assertThatThrownBy(() -> DeployConfig.load("test-misspelt.properties", DeployConfig.BROKER))
        .isInstanceOf(EmbeddedServerException.class).hasMessageContaining("'transactionCheckMaxx' is no setting");
  }

  @Test
  void aMissingFileIsNamed() {
    assertThatThrownBy(() -> DeployConfig.load("2m/broker-z.properties", DeployConfig.BROKER))
        .isInstanceOf(EmbeddedServerException.class).hasMessageContaining("ops/deploy/rocketmq/2m/broker-z.properties");
  }
}
