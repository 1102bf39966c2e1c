package io.converge.outbox;

import io.converge.outbox.internal.OutboxTxnBackend;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendFactory;
import io.converge.producer.spi.TxnBackend;
import java.util.Objects;

/**
 * The transactional-outbox backend of {@link io.converge.producer.TxnProducer}: each message is
 * inserted into {@code converge_outbox} in the unit of work's own DB transaction, so it exists if and
 * only if the business writes commit. An {@link OutboxRelay} publishes it afterwards, at least once,
 * in order per key. The unit of work never reaches the broker: it commits while the broker is down.
 *
 * <p>The schema is applied with {@code Migrations.apply(dataSource, "outbox")}. Immutable; thread-safe.
 *
 * <pre>{@code
 * TxnProducer producer = TxnProducer.builder().group("orders").dataSource(ds)
 *     .backend(OutboxBackend.outbox()).build();
 * }</pre>
 */
public final class OutboxBackend implements BackendFactory {

  private static final OutboxBackend INSTANCE = new OutboxBackend();

  private OutboxBackend() {
  }

  /** The outbox backend (it has no settings: the relay has them). */
  public static OutboxBackend outbox() {
    return INSTANCE;
  }

  @Override
  public String name() {
    return "outbox";
  }

  @Override
  public TxnBackend create(BackendContext context) {
    return new OutboxTxnBackend(Objects.requireNonNull(context, "context"));
  }

  @Override
  public String toString() {
    return "OutboxBackend";
  }
}
