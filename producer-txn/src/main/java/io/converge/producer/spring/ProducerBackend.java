package io.converge.producer.spring;

import io.converge.producer.spi.BackendFactory;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The backend of the auto-configured {@link io.converge.producer.TxnProducer}: each mode's
 * auto-configuration ({@code rocketmq}, {@code outbox}, {@code pulsar}) defines one bean of this type
 * and imports {@link ConvergeProducerConfiguration}, which builds the producer from it and
 * {@code converge.producer.*}. An application may define its own bean to replace a mode's backend
 * (e.g. a {@code RocketMQBackend} with another send timeout). Immutable; thread-safe.
 *
 * @param factory makes the backend when the producer is built (not before: a bean that backs off never
 *     needs the backend's settings); its failure fails the start
 * @param migrations the migration modules applied at start unless {@code converge.producer.migrate=false},
 *     e.g. {@code producer, outbox}
 */
public record ProducerBackend(Supplier<BackendFactory> factory, List<String> migrations) {

  /** Validates and copies. */
  public ProducerBackend {
    Objects.requireNonNull(factory, "factory");
    migrations = List.copyOf(migrations);
  }

  /** The backend {@code factory} makes, on a database with the migrations of {@code migrations}. */
  public static ProducerBackend of(Supplier<BackendFactory> factory, String... migrations) {
    return new ProducerBackend(factory, List.of(migrations));
  }
}
