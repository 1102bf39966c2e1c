package io.converge.ops.bench.baseline;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.NamedScenario;
import io.converge.ops.bench.Teardown;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.ProducerBuilder;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * Baselines on the raw Pulsar client, 1 KiB keyed messages, batching off: {@code pulsar-send}, a
 * synchronous send; {@code pulsar-txn[-N]}, a transaction of the same shape as the Pulsar
 * {@code TxnProducer}'s (open, send N messages one after the other, each acknowledged before the next,
 * commit; no database). Counts messages.
 */
public final class PulsarSend extends NamedScenario {

  private static final byte[] PAYLOAD = new byte[1024];
  /** Messages per transaction; 0 for plain sends. */
  private final int perTransaction;
  private final Teardown teardown = new Teardown();
  private PulsarClient client;
  private Producer<byte[]> producer;

  private PulsarSend(String name, int perTransaction) {
    super(name, "msg");
    this.perTransaction = perTransaction;
  }

  /** {@code pulsar-send}: one synchronous send per operation. */
  public static PulsarSend plain() {
    return new PulsarSend("pulsar-send", 0);
  }

  /** {@code pulsar-txn} ({@code messages} 1) or {@code pulsar-txn-<messages>}: one transaction per operation. */
  public static PulsarSend transactional(int messages) {
    return new PulsarSend(messages == 1 ? "pulsar-txn" : "pulsar-txn-" + messages, messages);
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    boolean txn = perTransaction > 0;
    client = teardown.add(
        PulsarClient.builder().serviceUrl(env.platform().pulsar().serviceUrl()).enableTransaction(txn).build(),
        PulsarClient::close);
    ProducerBuilder<byte[]> builder = client.newProducer()
        .topic(env.platform().newPulsarTopic(txn ? "bench-ptxn" : "bench-psend"))
        .enableBatching(false);
    if (txn) {
      builder.sendTimeout(0, TimeUnit.SECONDS); // transactional sends need the send timeout off, as in the backend
    }
    producer = builder.create();
  }

  @Override
  public int runOnce(int worker) throws Exception {
    if (perTransaction == 0) {
      producer.newMessage().key("customer-" + worker).value(PAYLOAD).send();
      return 1;
    }
    Transaction txn = client.newTransaction().withTransactionTimeout(35, TimeUnit.SECONDS).build().get();
    for (int i = 0; i < perTransaction; i++) {
      producer.newMessage(txn).key("customer-" + worker).value(PAYLOAD).sendAsync().get();
    }
    txn.commit().get();
    return perTransaction;
  }

  @Override
  public void close() throws Exception {
    teardown.close();
  }
}
