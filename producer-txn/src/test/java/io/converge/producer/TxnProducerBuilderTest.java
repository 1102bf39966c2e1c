package io.converge.producer;

import io.converge.producer.micrometer.MicrometerProducerMetrics;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.producer.spi.BackendFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** Settings are validated before any backend starts, and errors quote the bad value. */
class TxnProducerBuilderTest {

  private static final BackendFactory NEVER = new BackendFactory() {

    @Override
    public String name() {
      return "never";
    }

    @Override
    public io.converge.producer.spi.TxnBackend create(io.converge.producer.spi.BackendContext context) {
      throw new AssertionError("a backend was started despite invalid settings");
    }
  };

  private static TxnProducerBuilder valid() {
    return TxnProducer.builder().group("orders").dataSource(new PGSimpleDataSource()).backend(NEVER);
  }

  @Test
  void badSettingsNameThePropertyAndTheValue() {
    assertThatThrownBy(() -> valid().group("bad group").build())
        .hasMessage("producer.group must match [A-Za-z0-9_-]{1,100}, but was bad group");
    assertThatThrownBy(() -> valid().maxPayloadBytes(0).build())
        .hasMessage("producer.maxPayloadBytes must be between 1 and 67108864, but was 0");
    assertThatThrownBy(() -> valid().maxPayloadBytes(1000).maxUnitBytes(999).build())
        .hasMessage(
            "producer.maxUnitBytes must be between producer.maxPayloadBytes (1000) and 268435456, but was 999");
    assertThatThrownBy(() -> valid().maxUnitBytes(TxnProducerBuilder.MAX_UNIT_BYTES + 1).build())
        .hasMessageContaining("producer.maxUnitBytes must be between");
    assertThatThrownBy(() -> valid().maxUnitMessages(0).build())
        .hasMessage("producer.maxUnitMessages must be between 1 and 10000000, but was 0");
    assertThatThrownBy(() -> valid().localTransactionTimeout(Duration.ofMillis(5)).build())
        .hasMessageContaining("producer.localTransactionTimeout").hasMessageContaining("PT0.005S");
    assertThatThrownBy(() -> valid().logRetention(Duration.ofMinutes(5)).build())
        .hasMessage("producer.logRetention must be at least PT1H (twice producer.brokerCheckWindow PT7M30S"
            + " = transactionCheckMax x transactionCheckInterval, and at least 1 hour), but was PT5M");
    // issue 13.3: a broker that asks for 100 x 60 s needs rows kept longer than that
    assertThatThrownBy(
        () -> valid().brokerCheckWindow(Duration.ofMinutes(100)).logRetention(Duration.ofHours(3)).build())
        .hasMessageContaining("producer.logRetention must be at least PT3H20M").hasMessageContaining("but was PT3H");
    assertThatThrownBy(() -> valid().brokerCheckWindow(Duration.ZERO).build())
        .hasMessage("producer.brokerCheckWindow must be at least 1 s, but was PT0S");
    assertThatThrownBy(() -> valid().topics("no spaces allowed").build())
        .hasMessageContaining("producer.topics");
    assertThatThrownBy(() -> TxnProducer.builder().group("g").backend(NEVER).build())
        .hasMessageContaining("producer.dataSource is required");
  }

  @Test
  void rocketmqSettingsAreValidated() {
    assertThatThrownBy(() -> RocketMQBackend.nameServer("bad address!"))
        .hasMessage("rocketmq.nameServer must be host:port[;host:port...], but was bad address!");
    assertThatThrownBy(() -> RocketMQBackend.nameServer("127.0.0.1:9876").sendTimeout(Duration.ofMillis(1)))
        .hasMessageContaining("rocketmq.sendTimeout");
    assertThatThrownBy(() -> RocketMQBackend.nameServer("127.0.0.1:9876").checkThreads(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rocketmq.checkThreads must be between 1 and 64, but was 0");
  }

  @Test
  void micrometerCountsCheckBacksPendingAndLatency() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MicrometerProducerMetrics metrics = new MicrometerProducerMetrics(registry, "orders");
    metrics.checkBack("COMMIT");
    metrics.checkBack("ROLLBACK");
    metrics.checkBack("UNKNOWN");
    metrics.checkBack("UNKNOWN");
    metrics.pending(3);
    metrics.pending(-1);
    metrics.sent(Duration.ofMillis(5));
    assertThat(registry.get("txn.checkbacks").tag("answer", "UNKNOWN").counter().count()).isEqualTo(2.0);
    assertThat(registry.get("txn.checkbacks").tag("answer", "COMMIT").counter().count()).isEqualTo(1.0);
    assertThat(registry.get("txn.pending").tag("group", "orders").gauge().value()).isEqualTo(2.0);
    assertThat(registry.get("txn.send.latency").timer().count()).isEqualTo(1);
  }
}
