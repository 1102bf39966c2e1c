package io.converge.producer.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.producer.TxnProducerBuilder;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The broker configurations of {@code ops/deploy/rocketmq} (packaged by broker-embedded) against the half-message
 * backend's defaults, as {@code ops/deploy/README.md} explains them: the broker asks about a half message for
 * {@code transactionCheckMax x transactionCheckInterval}, Converge's {@code brokerCheckWindow} default; a unit
 * of work's {@code localTransactionTimeout} (30 s default) ends well inside that window; the op batch is a
 * small fraction of the check interval; and nothing acknowledges a send that one disk or one machine could lose.
 */
class DeployedBrokerSettingsTest {

  private static final Duration LOCAL_TRANSACTION_TIMEOUT = Duration.ofSeconds(30); // TxnProducerBuilder's default

  private static final List<String> MASTERS = List.of("2m/broker-a.properties", "2m/broker-b.properties",
      "2m-2s-sync/broker-a.properties", "2m-2s-sync/broker-b.properties", "controller/broker-a-n0.properties");

  @Test
  void theCheckWindowIsConvergesAndHoldsTheLocalTransactionTimeout() throws Exception {
    for (String file : MASTERS) {
      Properties p = load(file);
      Duration interval = Duration.ofMillis(Long.parseLong(p.getProperty("transactionCheckInterval")));
      Duration window = interval.multipliedBy(Long.parseLong(p.getProperty("transactionCheckMax")));
      assertThat(window).as(file).isEqualTo(TxnProducerBuilder.DEFAULT_BROKER_CHECK_WINDOW);
      assertThat(LOCAL_TRANSACTION_TIMEOUT.multipliedBy(4)).as(file).isLessThan(window);
      assertThat(Long.parseLong(p.getProperty("transactionOpBatchInterval")) * 10).as(file)
          .isLessThanOrEqualTo(interval.toMillis());
      assertThat(Duration.ofMillis(Long.parseLong(p.getProperty("transactionTimeOut")))).as(file)
          .isLessThan(LOCAL_TRANSACTION_TIMEOUT);
      // the commit log, half messages included, outlives the check window by far
      assertThat(Duration.ofHours(Long.parseLong(p.getProperty("fileReservedTime")))).as(file)
          .isGreaterThan(window.multipliedBy(2));
    }
  }

  @Test
  void noMasterAcknowledgesWhatOneDiskOrOneMachineCouldLose() throws Exception {
    assertThat(load("2m/broker-a.properties")).containsEntry("brokerRole", "ASYNC_MASTER")
        .containsEntry("flushDiskType", "SYNC_FLUSH");
    assertThat(load("2m/broker-b.properties")).containsEntry("flushDiskType", "SYNC_FLUSH");
    assertThat(load("2m-2s-sync/broker-a.properties")).containsEntry("brokerRole", "SYNC_MASTER");
    assertThat(load("2m-2s-sync/broker-b.properties")).containsEntry("brokerRole", "SYNC_MASTER");
    assertThat(load("controller/broker-a-n0.properties")).containsEntry("allAckInSyncStateSet", "true")
        .containsEntry("minInSyncReplicas", "2");
  }

  private static Properties load(String file) throws Exception {
    Properties p = new Properties();
    try (InputStream in = DeployedBrokerSettingsTest.class
        .getResourceAsStream("/io/converge/broker/rocketmq/deploy/" + file)) {
      assertThat(in).as(file + " on the classpath").isNotNull();
      p.load(in);
    }
    return p;
  }
}
