package io.converge.ops.bench.converge;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.BenchOrders;
import io.converge.ops.bench.NamedScenario;
import io.converge.ops.bench.Teardown;
import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import io.converge.core.rocketmq.KeyQueueSelector;
import io.converge.core.rocketmq.RocketMQClients;
import io.converge.core.Migrations;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;

/**
 * Consumption through the RocketMQ broker: each operation publishes a batch of {@value #BATCH} keyed
 * messages (asynchronously, one key to one queue) and waits until {@link RocketMQIdempotentConsumer} has
 * handled all of them (dedup claim + one business row, {@value #CONSUME_THREADS} consumer threads, 4 queues).
 * {@code consumer-rocketmq-ordered-K} is the default orderly consumer (one thread per queue at a time,
 * per-key order), {@code consumer-rocketmq-concurrent-K} the {@code ordered(false)} opt-out (no per-key
 * order); {@code K} keys per queue (1 or 8). Compare the two in the same run:
 * {@code consumer-rocketmq-ordered-1:consumer-rocketmq-concurrent-1}.
 */
public final class RocketMQConsumerScenario extends NamedScenario {

  /** The registered names. */
  public static final List<String> NAMES = List.of("consumer-rocketmq-ordered-1", "consumer-rocketmq-concurrent-1",
      "consumer-rocketmq-ordered-8", "consumer-rocketmq-concurrent-8");

  private static final int BATCH = 32;
  private static final int CONSUME_THREADS = 8;
  private static final String WORKER = "bench-worker";
  private static final byte[] PAYLOAD = "{\"order\":1,\"amount\":1999}".getBytes(StandardCharsets.UTF_8);

  private final boolean ordered;
  private final int keysPerQueue;
  private final AtomicLong rows = new AtomicLong();
  private final AtomicLong sequence = new AtomicLong();
  private final AtomicReference<Throwable> sendFailure = new AtomicReference<>();
  private String topic;
  private String[] keys;
  private Semaphore[] handled;
  private final Teardown teardown = new Teardown();
  private DefaultMQProducer producer;

  private RocketMQConsumerScenario(String name) {
    super(name, "msg");
    this.ordered = name.contains("-ordered-");
    this.keysPerQueue = Integer.parseInt(name.substring(name.lastIndexOf('-') + 1));
  }

  /** The scenario {@code name}, one of {@link #NAMES}. */
  public static RocketMQConsumerScenario named(String name) {
    if (!NAMES.contains(name)) {
      throw new IllegalArgumentException("not a RocketMQ consumer scenario: " + name);
    }
    return new RocketMQConsumerScenario(name);
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    DataSource pool = env.newPool("bench_rmq_consumer", CONSUME_THREADS + 2);
    BenchOrders.create(pool);
    Migrations.apply(pool, "consumer");
    topic = env.platform().newTopic("bench-consume");
    int queues = 4; // the embedded broker's queues per topic
    List<String> chosen = new ArrayList<>();
    int[] perQueue = new int[queues];
    for (int i = 0; chosen.size() < queues * keysPerQueue; i++) {
      String key = "order-" + i;
      int q = KeyQueueSelector.index(key, queues);
      if (perQueue[q] < keysPerQueue) {
        perQueue[q]++;
        chosen.add(key);
      }
    }
    keys = chosen.toArray(String[]::new);
    handled = new Semaphore[threads];
    for (int i = 0; i < threads; i++) {
      handled[i] = new Semaphore(0);
    }
    IdempotentHandler real = IdempotentHandler.builder().group("bench-" + name()).dataSource(pool)
        .handler((c, m) -> BenchOrders.insert(c, rows.incrementAndGet(), "customer")).build();
    String nameServer = env.platform().rocketmq().nameServerAddress();
    teardown.add(RocketMQIdempotentConsumer.builder().nameServer(nameServer).topic(topic).ordered(ordered)
        .consumeThreads(CONSUME_THREADS).handler(new Counting(real)).start(), RocketMQIdempotentConsumer::close);
    producer = teardown.add(RocketMQClients.startProducer(nameServer, "bench-consume-producer-" + System.nanoTime()),
        DefaultMQProducer::shutdown);
  }

  @Override
  public int runOnce(int worker) throws Exception {
    for (int i = 0; i < BATCH; i++) {
      String key = keys[(int) (sequence.getAndIncrement() % keys.length)];
      Message m = new Message(topic, "*", key, PAYLOAD);
      m.putUserProperty(Envelope.MESSAGE_ID, MessageIds.shared().next());
      m.putUserProperty(WORKER, Integer.toString(worker));
      producer.send(m, KeyQueueSelector.BY_KEY, key, new SendCallback() {

        @Override
        public void onSuccess(SendResult result) {
        }

        @Override
        public void onException(Throwable e) {
          sendFailure.compareAndSet(null, e);
        }
      });
    }
    if (!handled[worker].tryAcquire(BATCH, 60, TimeUnit.SECONDS)) {
      throw new IllegalStateException("the consumer did not handle a batch within 60 s", sendFailure.get());
    }
    return BATCH;
  }

  @Override
  public void close() throws Exception {
    teardown.close();
  }

  /** Counts each handled message for the worker that sent it. */
  private final class Counting implements IdempotentHandler {

    private final IdempotentHandler real;

    Counting(IdempotentHandler real) {
      this.real = real;
    }

    @Override
    public Outcome handle(IncomingMessage message) {
      Outcome outcome = real.handle(message);
      handled[Integer.parseInt(message.header(WORKER))].release();
      return outcome;
    }

    @Override
    public Outcome resume(long dlqId) {
      return real.resume(dlqId);
    }

    @Override
    public String group() {
      return real.group();
    }
  }
}
