package io.converge.ops.bench.saga;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.consumer.spi.ForwardingIdempotentHandler;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.Latencies;
import io.converge.ops.bench.NamedScenario;
import io.converge.ops.bench.Teardown;
import io.converge.outbox.OutboxBackend;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.producer.TxnProducer;
import io.converge.producer.TxnProducerBuilder;
import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.pulsar.PulsarBackend;
import io.converge.pulsar.PulsarIdempotentConsumer;
import io.converge.saga.ReplyClass;
import io.converge.saga.SagaCoordinator;
import io.converge.saga.SagaHeaders;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * What the scenarios that drive the saga coordinator share ({@code saga-orchestrated-<backend>},
 * {@code tcc-global-<backend>}): the backend's producer (half messages, the outbox with a relay to RocketMQ, Pulsar
 * transactions), the consumer binding, and one operation = one saga (or global transaction) started and awaited until
 * its last step's success reply committed its completion, measured from the start to that commit.
 */
public abstract class CoordinatorScenario extends NamedScenario {

  /** How long one saga may take to complete before the scenario fails. */
  static final Duration SETTLE = Duration.ofMinutes(1);
  private static final String DTM = "DTM publishes 575 two-phase global transactions per second, two SQL statements"
      + " per branch, on 4 cores.";

  /** {@code rocketmq}, {@code outbox} or {@code pulsar}. */
  protected final String backend;
  /** Closes what the set-up started, in reverse. */
  protected final Teardown teardown = new Teardown();
  /** This run's suffix of groups and ids. */
  protected final String run = Long.toString(System.nanoTime(), 36);
  private final String prefix;
  private final Latencies latencies = new Latencies();
  private final AtomicLong ids = new AtomicLong();
  private final Map<String, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();

  /** {@code prefix} names the groups and the saga ids ({@code bench-saga}, {@code bench-tcc}). */
  protected CoordinatorScenario(String name, String unit, String backend, String prefix) {
    super(name, unit);
    this.backend = backend;
    this.prefix = prefix;
  }

  @Override
  public Latencies latencies() {
    return latencies;
  }

  @Override
  public String reference() {
    return DTM;
  }

  /** Starts the saga (or global transaction) {@code id}. */
  protected abstract void start(String id);

  @Override
  public int runOnce(int worker) throws Exception {
    String id = prefix + "-" + run + "-" + ids.incrementAndGet();
    CompletableFuture<Void> done = new CompletableFuture<>();
    inFlight.put(id, done);
    long start = System.nanoTime();
    try {
      start(id);
      done.get(SETTLE.toMillis(), TimeUnit.MILLISECONDS);
    } finally {
      inFlight.remove(id);
    }
    latencies.record(System.nanoTime() - start);
    return 1;
  }

  @Override
  public void close() throws Exception {
    teardown.close();
  }

  /** Whether the backend is Pulsar (its topics and consumers are Pulsar's). */
  protected boolean pulsar() {
    return backend.equals("pulsar");
  }

  /** A new topic of the backend's broker. */
  protected String topic(BenchEnv env, String name) {
    return pulsar() ? env.platform().newPulsarTopic(name) : env.platform().newTopic(name);
  }

  /** The backend's producer on {@code pool} for {@code topics} (and, for the outbox, its relay, started). */
  protected TxnProducer producer(BenchEnv env, DataSource pool, List<String> topics) {
    String nameServer = env.platform().rocketmq().nameServerAddress();
    TxnProducerBuilder b = TxnProducer.builder().group(prefix + "-" + run).dataSource(pool)
        .topics(topics.toArray(String[]::new));
    switch (backend) {
      case "rocketmq" -> b.backend(RocketMQBackend.nameServer(nameServer));
      case "pulsar" -> b.backend(PulsarBackend.serviceUrl(env.platform().pulsar().serviceUrl()));
      default -> {
        b.backend(OutboxBackend.outbox());
        OutboxRelay relay = OutboxRelay.builder().dataSource(pool)
            .sink(RocketMQSink.nameServer(nameServer).group(prefix + "-relay-" + run).build()).build();
        relay.start();
        teardown.add(relay);
      }
    }
    return teardown.add(b.build(), TxnProducer::close);
  }

  /** {@code handler} consuming {@code topic} on the backend's binding, closed with the scenario. */
  protected void consume(BenchEnv env, String topic, IdempotentHandler handler, int threads) {
    if (pulsar()) {
      teardown.add(PulsarIdempotentConsumer.builder().serviceUrl(env.platform().pulsar().serviceUrl()).topic(topic)
          .subscription(handler.group()).handler(handler).start(), PulsarIdempotentConsumer::close);
    } else {
      teardown.add(RocketMQIdempotentConsumer.builder().nameServer(env.platform().rocketmq().nameServerAddress())
          .topic(topic).handler(handler).consumeThreads(Math.max(1, Math.min(threads, 16))).start(),
          RocketMQIdempotentConsumer::close);
    }
  }

  /**
   * Consumes the coordinator's replies on {@code topic}, telling the waiting worker when the success reply of
   * {@code lastStep} was applied: when {@link IdempotentHandler#handle} returns, the transition it caused (the
   * completion) has committed.
   */
  protected void consumeReplies(BenchEnv env, String topic, SagaCoordinator coordinator, String lastStep,
      int threads) {
    consume(env, topic, new ForwardingIdempotentHandler(coordinator.replyHandler()) {

      @Override
      public Outcome handle(IncomingMessage message) {
        Outcome outcome = delegate().handle(message);
        if (outcome == Outcome.PROCESSED && lastStep.equals(message.header(SagaHeaders.STEP))
            && ReplyClass.SUCCESS.name().equals(message.header(SagaHeaders.OUTCOME))) {
          CompletableFuture<Void> f = inFlight.get(message.header(SagaHeaders.SAGA_ID));
          if (f != null) {
            f.complete(null);
          }
        }
        return outcome;
      }
    }, threads);
  }
}
