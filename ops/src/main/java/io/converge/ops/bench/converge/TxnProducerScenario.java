package io.converge.ops.bench.converge;

import io.converge.producer.internal.TxnLog;
import java.time.LocalDate;
import java.time.ZoneOffset;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.BenchOrders;
import io.converge.ops.bench.NamedScenario;
import io.converge.ops.bench.Teardown;
import io.converge.outbox.Outbox;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.core.Migrations;
import io.converge.producer.spi.BackendFactory;
import io.converge.pulsar.PulsarBackend;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * A {@link TxnProducer} backend under load: per operation one unit of work with a one-row business
 * insert and {@code messages} 1 KiB messages of one key. {@code txn-producer-rocketmq} (half messages,
 * log rows, commit, END COMMIT; compare with {@code pg-insert} and {@code rocketmq-txn-send}) counts
 * units; {@code txn-producer-pulsar[-100]} (Pulsar transaction, its log row, DB commit, Pulsar commit;
 * compare with {@code pulsar-txn[-100]}) counts messages; {@code outbox-write} (the outbox row in the
 * business transaction; compare with {@code pg-insert}) counts units.
 */
public final class TxnProducerScenario extends NamedScenario {

  private static final byte[] PAYLOAD = new byte[1024];

  private final int messages;
  private final String[] migrations;
  private final Function<BenchEnv, BackendFactory> backend;
  private final Function<BenchEnv, String> newTopic;
  private final AtomicLong ids = new AtomicLong();
  private final Teardown teardown = new Teardown();
  private TxnProducer producer;
  private String topic;

  private TxnProducerScenario(String name, String unit, int messages, Function<BenchEnv, BackendFactory> backend,
      Function<BenchEnv, String> newTopic, String... migrations) {
    super(name, unit);
    this.messages = messages;
    this.backend = backend;
    this.newTopic = newTopic;
    this.migrations = migrations;
  }

  /** {@code txn-producer-rocketmq}: one message per unit. */
  public static TxnProducerScenario rocketmq() {
    return new TxnProducerScenario("txn-producer-rocketmq", "unit", 1,
        env -> RocketMQBackend.nameServer(env.platform().rocketmq().nameServerAddress()).checkThreads(4),
        env -> env.platform().newTopic("bench-txnp"), "producer");
  }

  /**
   * {@code outbox-write}: the outbox backend, one message row per unit written in the business
   * transaction (no relay; compare with {@code pg-insert}, the business insert alone).
   */
  public static TxnProducerScenario outbox() {
    return new TxnProducerScenario("outbox-write", "unit", 1, env -> OutboxBackend.outbox(), env -> "bench-outbox",
        "producer", "outbox");
  }

  /** {@code txn-producer-pulsar} ({@code messages} = 1) or {@code txn-producer-pulsar-<messages>}. */
  public static TxnProducerScenario pulsar(int messages) {
    return new TxnProducerScenario(messages == 1 ? "txn-producer-pulsar" : "txn-producer-pulsar-" + messages, "msg",
        messages,
        env -> PulsarBackend.serviceUrl(env.platform().pulsar().serviceUrl()),
        env -> env.platform().newPulsarTopic("bench-ptxnp"),
        "producer", "pulsar");
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    DataSource pool = env.newPool("bench_txn", threads + 2);
    for (String m : migrations) {
      Migrations.apply(pool, m);
      if (m.equals("outbox")) { // as the relay's purge keeps it: today's rows go to today's partition
        Outbox.partitions(pool).createAhead(LocalDate.now(ZoneOffset.UTC), Outbox.PARTITIONS_AHEAD + 1);
      }
    }
    BenchOrders.create(pool);
    // the log's day partitions, as a running producer's purge keeps them (its first run is one interval after start)
    TxnLog.partitions(pool).createAhead(LocalDate.now(ZoneOffset.UTC), TxnLog.PARTITIONS_AHEAD + 1);
    topic = newTopic.apply(env);
    producer = teardown.add(TxnProducer.builder()
        .group("bench-txnp-" + System.nanoTime())
        .dataSource(pool)
        .backend(backend.apply(env))
        .topics(topic)
        .build(), TxnProducer::close);
  }

  @Override
  public int runOnce(int worker) {
    long id = ids.incrementAndGet();
    producer.inTransaction(tx -> {
      BenchOrders.insert(tx.connection(), id, "customer-" + worker);
      for (int i = 0; i < messages; i++) {
        tx.publish(OutgoingMessage.builder(topic).key("customer-" + worker).payload(PAYLOAD).build());
      }
      return null;
    });
    return messages;
  }

  @Override
  public void close() throws Exception {
    teardown.close();
  }
}
