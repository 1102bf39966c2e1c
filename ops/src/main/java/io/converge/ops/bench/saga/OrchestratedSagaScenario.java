package io.converge.ops.bench.saga;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.core.Migrations;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.Latencies;
import io.converge.ops.bench.NamedScenario;
import io.converge.ops.bench.Teardown;
import io.converge.outbox.OutboxBackend;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.pulsar.PulsarBackend;
import io.converge.pulsar.PulsarIdempotentConsumer;
import io.converge.saga.ReplyClass;
import io.converge.saga.SagaCodec;
import io.converge.saga.SagaCoordinator;
import io.converge.saga.SagaDefinition;
import io.converge.saga.SagaHeaders;
import io.converge.saga.SagaParticipant;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * {@code saga-orchestrated-<backend>}: the saga coordinator itself under load, without the examples' services. One
 * operation starts a saga of three remote steps (reserve, debit, ship), each through a {@link SagaParticipant} doing
 * two SQL statements (an insert and an update of its own tables) and replying in its transaction, and waits until
 * the saga's last reply committed its completion; the latency is from the start to that commit. Commands and replies
 * go through the backend ({@code rocketmq}: half messages; {@code outbox}: the outbox and a polling relay to
 * RocketMQ; {@code pulsar}: Pulsar transactions) and the consumer binding (RocketMQ, or Pulsar). Each worker thread
 * has one saga in flight. Compare with DTM's published figure (the reference) and with {@code saga-e2e-<backend>}
 * (the same flow through the examples' HTTP services and JPA).
 */
public final class OrchestratedSagaScenario extends NamedScenario {

  /** The names of the scenarios, one per backend. */
  public static final List<String> NAMES = List.of("saga-orchestrated-rocketmq", "saga-orchestrated-outbox",
      "saga-orchestrated-pulsar");

  /** How long one saga may take to complete before the scenario fails. */
  static final Duration SETTLE = Duration.ofMinutes(1);

  private static final List<String> STEPS = List.of("reserve", "debit", "ship");
  private static final String DTM = "DTM publishes 575 two-phase global transactions per second, two SQL statements"
      + " per branch, on 4 cores.";

  private final String backend;
  private final Latencies latencies = new Latencies();
  private final Teardown teardown = new Teardown();
  private final AtomicLong ids = new AtomicLong();
  private final Map<String, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();
  private final String run = Long.toString(System.nanoTime(), 36);
  private SagaDefinition<String> definition;
  private SagaCoordinator coordinator;

  private OrchestratedSagaScenario(String backend) {
    super("saga-orchestrated-" + backend, "saga");
    this.backend = backend;
  }

  /** The scenario called {@code name}, one of {@link #NAMES}. */
  public static OrchestratedSagaScenario named(String name) {
    if (!NAMES.contains(name)) {
      throw new IllegalArgumentException("orchestrated saga scenario must be one of " + NAMES + ", but was " + name);
    }
    return new OrchestratedSagaScenario(name.substring("saga-orchestrated-".length()));
  }

  @Override
  public Latencies latencies() {
    return latencies;
  }

  @Override
  public String reference() {
    return DTM;
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    DataSource pool = env.newPool("bench_saga", threads * 4 + 8);
    for (String m : List.of("producer", "consumer", "saga", "outbox", "pulsar")) {
      Migrations.apply(pool, m);
    }
    try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE bench_step (saga_id text, step text, direction text, PRIMARY KEY (saga_id, step, direction))");
      s.execute("CREATE TABLE bench_counter (step text PRIMARY KEY, n bigint NOT NULL)");
      s.execute("INSERT INTO bench_counter VALUES ('reserve', 0), ('debit', 0), ('ship', 0)");
    }
    boolean pulsar = backend.equals("pulsar");
    String replies = topic(env, pulsar, "saga-replies");
    Map<String, String> commands = new java.util.LinkedHashMap<>();
    Map<String, String> compensations = new java.util.LinkedHashMap<>();
    for (String step : STEPS) {
      commands.put(step, topic(env, pulsar, "saga-" + step));
      compensations.put(step, topic(env, pulsar, "saga-" + step + "-undo"));
    }
    List<String> all = new java.util.ArrayList<>(List.of(replies));
    all.addAll(commands.values());
    all.addAll(compensations.values());
    TxnProducer producer = teardown.add(producer(env, pool, all), TxnProducer::close);

    SagaDefinition.Builder<String> b = SagaDefinition.builder("bench-order", SagaCodec.json());
    for (String step : STEPS) {
      b.remote(step, s -> s.participant(step).command(commands.get(step), SagaCodec::utf8)
          .compensation(compensations.get(step), SagaCodec::utf8).timeout(Duration.ofSeconds(30)));
    }
    definition = b.deadline(Duration.ofMinutes(5)).build();
    coordinator = teardown.add(SagaCoordinator.builder().producer(producer).definitions(definition)
        .replyTopic(replies).replyGroup("bench-saga-coordinator-" + run).build(), SagaCoordinator::close);
    IdempotentHandler replyHandler = coordinator.replyHandler();
    IdempotentHandler watched = new Watched(replyHandler, inFlight);
    consume(env, pulsar, replies, watched, threads);
    for (String step : STEPS) {
      SagaParticipant participant = SagaParticipant.builder(step).producer(producer)
          .step(step, (c, m) -> work(c, m, step, "forward"))
          .compensation(step, (c, m) -> work(c, m, step, "compensate")).build();
      consume(env, pulsar, commands.get(step), participant.handler("bench-" + step + "-" + run), threads);
      consume(env, pulsar, compensations.get(step), participant.handler("bench-" + step + "-undo-" + run), 1);
    }
    coordinator.startPolling();
  }

  /** The participant's work: two statements, an insert of its row and an update of its counter. */
  private static byte[] work(Connection c, IncomingMessage m, String step, String direction) throws Exception {
    try (PreparedStatement insert = c.prepareStatement("INSERT INTO bench_step VALUES (?, ?, ?)");
        PreparedStatement count = c.prepareStatement("UPDATE bench_counter SET n = n + 1 WHERE step = ?")) {
      insert.setString(1, m.header(SagaHeaders.SAGA_ID));
      insert.setString(2, step);
      insert.setString(3, direction);
      insert.executeUpdate();
      count.setString(1, step);
      count.executeUpdate();
    }
    return "{}".getBytes(StandardCharsets.UTF_8);
  }

  private TxnProducer producer(BenchEnv env, DataSource pool, List<String> topics) {
    String nameServer = env.platform().rocketmq().nameServerAddress();
    io.converge.producer.TxnProducerBuilder b = TxnProducer.builder().group("bench-saga-" + run).dataSource(pool)
        .topics(topics.toArray(String[]::new));
    switch (backend) {
      case "rocketmq" -> b.backend(RocketMQBackend.nameServer(nameServer));
      case "pulsar" -> b.backend(PulsarBackend.serviceUrl(env.platform().pulsar().serviceUrl()));
      default -> {
        b.backend(OutboxBackend.outbox());
        OutboxRelay relay = OutboxRelay.builder().dataSource(pool)
            .sink(RocketMQSink.nameServer(nameServer).group("bench-saga-relay-" + run).build()).build();
        relay.start();
        teardown.add(relay);
      }
    }
    return b.build();
  }

  private String topic(BenchEnv env, boolean pulsar, String prefix) {
    return pulsar ? env.platform().newPulsarTopic(prefix) : env.platform().newTopic(prefix);
  }

  private void consume(BenchEnv env, boolean pulsar, String topic, IdempotentHandler handler, int threads) {
    if (pulsar) {
      teardown.add(PulsarIdempotentConsumer.builder().serviceUrl(env.platform().pulsar().serviceUrl()).topic(topic)
          .subscription(handler.group()).handler(handler).start(), PulsarIdempotentConsumer::close);
    } else {
      teardown.add(RocketMQIdempotentConsumer.builder().nameServer(env.platform().rocketmq().nameServerAddress())
          .topic(topic).handler(handler).consumeThreads(Math.max(1, Math.min(threads, 16))).start(),
          RocketMQIdempotentConsumer::close);
    }
  }

  @Override
  public int runOnce(int worker) throws Exception {
    String id = "bench-" + run + "-" + ids.incrementAndGet();
    CompletableFuture<Void> done = new CompletableFuture<>();
    inFlight.put(id, done);
    long start = System.nanoTime();
    try {
      coordinator.start(definition, id, "{}");
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

  /**
   * The coordinator's reply handler, telling the waiting worker when the last step's success reply was applied: when
   * {@link IdempotentHandler#handle} returns, the transition it caused (the saga's completion) has committed.
   */
  private static final class Watched extends io.converge.consumer.spi.ForwardingIdempotentHandler {

    private final Map<String, CompletableFuture<Void>> inFlight;

    Watched(IdempotentHandler handler, Map<String, CompletableFuture<Void>> inFlight) {
      super(handler);
      this.inFlight = inFlight;
    }

    @Override
    public Outcome handle(IncomingMessage message) {
      Outcome outcome = delegate().handle(message);
      if (outcome == Outcome.PROCESSED && STEPS.get(STEPS.size() - 1).equals(message.header(SagaHeaders.STEP))
          && ReplyClass.SUCCESS.name().equals(message.header(SagaHeaders.OUTCOME))) {
        CompletableFuture<Void> f = inFlight.get(message.header(SagaHeaders.SAGA_ID));
        if (f != null) {
          f.complete(null);
        }
      }
      return outcome;
    }
  }
}
