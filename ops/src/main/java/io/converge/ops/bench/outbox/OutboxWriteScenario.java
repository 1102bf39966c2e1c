package io.converge.ops.bench.outbox;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.BenchOrders;
import io.converge.ops.bench.Scenario;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.schema.Migrations;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * The outbox {@link TxnProducer}: per operation one unit of work with a one-row business insert and one
 * 1 KiB message written to {@code converge_outbox} in the same transaction (no relay running). Compare
 * with {@code pg-insert} (the business insert alone) in the same run: at 1 thread the inverse of the
 * throughput ratio is the latency ratio.
 */
public final class OutboxWriteScenario implements Scenario {

  private static final byte[] PAYLOAD = new byte[1024];

  private final AtomicLong ids = new AtomicLong();
  private TxnProducer producer;

  @Override
  public String name() {
    return "outbox-write";
  }

  @Override
  public String unit() {
    return "tx";
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    DataSource pool = env.newPool("bench_outbox_write", threads + 2);
    Migrations.apply(pool, "producer");
    Migrations.apply(pool, "outbox");
    BenchOrders.create(pool);
    producer = TxnProducer.builder().group("bench-outbox-" + System.nanoTime()).dataSource(pool)
        .backend(OutboxBackend.outbox()).build();
  }

  @Override
  public int runOnce(int worker) {
    long id = ids.incrementAndGet();
    producer.inTransaction(tx -> {
      BenchOrders.insert(tx.connection(), id, "customer-" + worker);
      return tx.publish(OutgoingMessage.builder("bench-outbox").key("customer-" + worker).payload(PAYLOAD).build());
    });
    return 1;
  }

  @Override
  public void close() {
    if (producer != null) {
      producer.close();
    }
  }
}
