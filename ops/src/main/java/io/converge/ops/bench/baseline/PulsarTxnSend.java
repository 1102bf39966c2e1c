package io.converge.ops.bench.baseline;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.Scenario;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * Baseline: a raw Pulsar transaction of the same shape as the Pulsar {@code TxnProducer}'s: open a
 * transaction, send {@code messages} 1 KiB messages in it one after the other (each acknowledged before
 * the next), commit; no database. Counts messages.
 */
public final class PulsarTxnSend implements Scenario {

  private static final byte[] PAYLOAD = new byte[1024];
  private final int messages;
  private PulsarClient client;
  private Producer<byte[]> producer;

  /** A transaction of {@code messages} messages per operation. */
  public PulsarTxnSend(int messages) {
    this.messages = messages;
  }

  @Override
  public String name() {
    return messages == 1 ? "pulsar-txn" : "pulsar-txn-" + messages;
  }

  @Override
  public String unit() {
    return "msg";
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    client = PulsarClient.builder().serviceUrl(env.pulsar().serviceUrl()).enableTransaction(true).build();
    // transactional sends need the send timeout off, as in the backend
    producer = client.newProducer().topic(env.newPulsarTopic("bench-ptxn")).enableBatching(false)
        .sendTimeout(0, TimeUnit.SECONDS).create();
  }

  @Override
  public int runOnce(int worker) throws Exception {
    Transaction txn = client.newTransaction().withTransactionTimeout(35, TimeUnit.SECONDS).build().get();
    for (int i = 0; i < messages; i++) {
      producer.newMessage(txn).key("customer-" + worker).value(PAYLOAD).sendAsync().get();
    }
    txn.commit().get();
    return messages;
  }

  @Override
  public void close() throws Exception {
    if (client != null) {
      client.close();
    }
  }
}
