package io.converge.producer.internal;

import io.converge.core.SigningKeys;
import io.converge.core.tracing.Tracing;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducerBuilder.Settings;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendFactory;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.ProducerMetrics;
import io.converge.producer.spi.TxnBackend;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Units of work without a database or a broker: what {@link UnitContext} hands its backend, recorded. */
final class RecordingUnits {

  private RecordingUnits() {
  }

  /** What a backend was handed. */
  static final class Recording implements BackendTransaction {

    final List<OutgoingMessage> published = new ArrayList<>();

    @Override
    public void publish(OutgoingMessage message, Connection connection) {
      published.add(message);
    }

    @Override
    public void rollbackToSavepoint(int kept) {
      published.subList(kept, published.size()).clear();
    }

    @Override
    public void afterCommit() {
    }

    @Override
    public void afterRollback() {
    }
  }

  /** Settings of group "orders" with these options, the others at their defaults. */
  static Settings settings(Clock clock, Tracing tracing, SigningKeys keys, int maxPayloadBytes, long maxUnitBytes,
      int maxUnitMessages) {
    BackendFactory recording = new BackendFactory() {

      @Override
      public String name() {
        return "rocketmq";
      }

      @Override
      public TxnBackend create(BackendContext context) {
        throw new UnsupportedOperationException("the test hands the unit its backend transaction");
      }
    };
    return new Settings("orders", null, recording, List.of(), maxPayloadBytes, maxUnitBytes, maxUnitMessages,
        Duration.ofSeconds(30), Duration.ofDays(7), Duration.ofMinutes(8), Duration.ZERO, ProducerMetrics.NONE, clock,
        tracing, keys);
  }

  /** A unit on no connection whose backend transaction is {@code backend}. */
  static UnitContext unit(Settings settings, Recording backend) {
    return new UnitContext(settings, null, backend);
  }
}
