package io.converge.ops.bench.baseline;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.Scenario;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;

/** Baseline: a raw Pulsar synchronous send of a 1 KiB message with a key, batching off. */
public final class PulsarSend implements Scenario {

  private static final byte[] PAYLOAD = new byte[1024];
  private PulsarClient client;
  private Producer<byte[]> producer;

  @Override
  public String name() {
    return "pulsar-send";
  }

  @Override
  public String unit() {
    return "msg";
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    client = PulsarClient.builder().serviceUrl(env.pulsar().serviceUrl()).build();
    producer = client.newProducer().topic(env.newPulsarTopic("bench-psend")).enableBatching(false).create();
  }

  @Override
  public int runOnce(int worker) throws Exception {
    producer.newMessage().key("customer-" + worker).value(PAYLOAD).send();
    return 1;
  }

  @Override
  public void close() throws Exception {
    if (client != null) {
      client.close();
    }
  }
}
