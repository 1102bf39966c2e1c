package io.converge.ops.bench.converge;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.BenchOrders;
import io.converge.ops.bench.Scenario;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.producer.schema.Migrations;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * The RocketMQ {@link TxnProducer}: per operation one unit of work with a one-row business insert and
 * one 1 KiB message (half message, log row, commit, END COMMIT). Compare with {@code pg-insert} and
 * {@code rocketmq-send} in the same run.
 */
public final class RocketMQTxnProducerScenario implements Scenario {

  private static final byte[] PAYLOAD = new byte[1024];

  private final AtomicLong ids = new AtomicLong();
  private TxnProducer producer;
  private String topic;

  @Override
  public String name() {
    return "txn-producer-rocketmq";
  }

  @Override
  public String unit() {
    return "unit";
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    DataSource pool = env.newPool("bench_txn", threads + 2);
    Migrations.apply(pool, "producer");
    BenchOrders.create(pool);
    topic = env.newTopic("bench-txnp");
    producer = TxnProducer.builder()
        .group("bench-txnp-" + System.nanoTime())
        .dataSource(pool)
        .backend(RocketMQBackend.nameServer(env.rocketmq().nameServerAddress()).checkThreads(4))
        .topics(topic)
        .build();
  }

  @Override
  public int runOnce(int worker) {
    long id = ids.incrementAndGet();
    producer.inTransaction(tx -> {
      BenchOrders.insert(tx.connection(), id, "customer-" + worker);
      return tx.publish(OutgoingMessage.builder(topic).key("customer-" + worker).payload(PAYLOAD).build());
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
