package io.converge.ops.bench.tcc;

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
import io.converge.saga.TccDefinition;
import io.converge.saga.SagaHeaders;
import io.converge.saga.tcc.TccHeaders;
import io.converge.saga.tcc.TccParticipant;
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
 * {@code tcc-global-<backend>}: TCC global transactions driven by the saga coordinator, without the examples'
 * services. One operation starts a global transaction of two branches ({@code out} and {@code in}, as DTM's transfer
 * benchmark), each a {@link TccParticipant} reached by messages whose Try, Confirm and Cancel do two SQL statements (an
 * insert of its row and an update of its counter) through the participant's real barrier and reply in its
 * transaction, and waits until the last Confirm's reply committed the global transaction's completion: Try out, Try
 * in, Confirm out, Confirm in, four commands and four replies. The latency is from the start to that commit. Commands
 * and replies go through the backend ({@code rocketmq}: half messages; {@code outbox}: the outbox and a polling relay
 * to RocketMQ; {@code pulsar}: Pulsar transactions) and the consumer binding (RocketMQ, or Pulsar), as
 * {@code saga-orchestrated-<backend>}. Each worker thread has one global transaction in flight. Compare with DTM's
 * published figure (the reference).
 */
public final class TccGlobalScenario extends NamedScenario {

  /** The names of the scenarios, one per backend. */
  public static final List<String> NAMES = List.of("tcc-global-rocketmq", "tcc-global-outbox", "tcc-global-pulsar");

  /** How long one global transaction may take to complete before the scenario fails. */
  static final Duration SETTLE = Duration.ofMinutes(1);

  private static final List<String> BRANCHES = List.of("out", "in");
  private static final String LAST = BRANCHES.get(BRANCHES.size() - 1) + TccDefinition.CONFIRM_SUFFIX;
  private static final String DTM = "DTM publishes 575 two-phase global transactions per second, two SQL statements"
      + " per branch, on 4 cores.";

  private final String backend;
  private final Latencies latencies = new Latencies();
  private final Teardown teardown = new Teardown();
  private final AtomicLong ids = new AtomicLong();
  private final Map<String, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();
  private final String run = Long.toString(System.nanoTime(), 36);
  private TccDefinition<String> definition;
  private DataSource pool;
  private SagaCoordinator coordinator;

  private TccGlobalScenario(String backend) {
    super("tcc-global-" + backend, "global");
    this.backend = backend;
  }

  /** The scenario called {@code name}, one of {@link #NAMES}. */
  public static TccGlobalScenario named(String name) {
    if (!NAMES.contains(name)) {
      throw new IllegalArgumentException("TCC global scenario must be one of " + NAMES + ", but was " + name);
    }
    return new TccGlobalScenario(name.substring("tcc-global-".length()));
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
    pool = env.newPool("bench_tcc", threads * 4 + 8);
    for (String m : List.of("producer", "consumer", "saga", "tcc", "outbox", "pulsar")) {
      Migrations.apply(pool, m);
    }
    try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE bench_branch (global_id text, branch text, operation text,"
          + " PRIMARY KEY (global_id, branch, operation))");
      s.execute("CREATE TABLE bench_counter (branch text PRIMARY KEY, n bigint NOT NULL)");
      s.execute("INSERT INTO bench_counter VALUES ('out', 0), ('in', 0)");
    }
    boolean pulsar = backend.equals("pulsar");
    String replies = topic(env, pulsar, "tcc-replies");
    Map<String, String> topics = new java.util.LinkedHashMap<>();
    for (String branch : BRANCHES) {
      topics.put(branch, topic(env, pulsar, "tcc-" + branch));
    }
    List<String> all = new java.util.ArrayList<>(List.of(replies));
    all.addAll(topics.values());
    TxnProducer producer = teardown.add(producer(env, pool, all), TxnProducer::close);

    TccDefinition.Builder<String> b = TccDefinition.builder("bench-transfer", SagaCodec.json())
        .globalTimeout(Duration.ofMinutes(5));
    for (String branch : BRANCHES) {
      b.branch(branch, s -> s.messages(topics.get(branch)).timeout(Duration.ofSeconds(30)));
    }
    definition = b.build();
    coordinator = teardown.add(SagaCoordinator.builder().producer(producer).tcc(definition)
        .replyTopic(replies).replyGroup("bench-tcc-coordinator-" + run).build(), SagaCoordinator::close);
    consume(env, pulsar, replies, new Watched(coordinator.replyHandler(), inFlight), threads);
    for (String branch : BRANCHES) {
      TccParticipant participant = TccParticipant.builder(branch).producer(producer)
          .branch(branch, (c, m) -> work(c, m, branch), (c, m) -> work(c, m, branch), (c, m) -> work(c, m, branch))
          .build();
      consume(env, pulsar, topics.get(branch), participant.handler("bench-tcc-" + branch + "-" + run), threads);
    }
    coordinator.startPolling();
  }

  /** The participant's work for each operation: two statements, an insert of its row and an update of a counter. */
  private static byte[] work(Connection c, IncomingMessage m, String branch) throws Exception {
    try (PreparedStatement insert = c.prepareStatement("INSERT INTO bench_branch VALUES (?, ?, ?)");
        PreparedStatement count = c.prepareStatement("UPDATE bench_counter SET n = n + 1 WHERE branch = ?")) {
      insert.setString(1, m.header(TccHeaders.GLOBAL_ID));
      insert.setString(2, branch);
      insert.setString(3, m.header(TccHeaders.OPERATION));
      insert.executeUpdate();
      count.setString(1, branch);
      count.executeUpdate();
    }
    return "{}".getBytes(StandardCharsets.UTF_8);
  }

  private TxnProducer producer(BenchEnv env, DataSource pool, List<String> topics) {
    String nameServer = env.platform().rocketmq().nameServerAddress();
    io.converge.producer.TxnProducerBuilder b = TxnProducer.builder().group("bench-tcc-" + run).dataSource(pool)
        .topics(topics.toArray(String[]::new));
    switch (backend) {
      case "rocketmq" -> b.backend(RocketMQBackend.nameServer(nameServer));
      case "pulsar" -> b.backend(PulsarBackend.serviceUrl(env.platform().pulsar().serviceUrl()));
      default -> {
        b.backend(OutboxBackend.outbox());
        OutboxRelay relay = OutboxRelay.builder().dataSource(pool)
            .sink(RocketMQSink.nameServer(nameServer).group("bench-tcc-relay-" + run).build()).build();
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
    String id = "bench-tcc-" + run + "-" + ids.incrementAndGet();
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

  /**
   * What the participants did, {@code "<branch> <operation>"} to the number of rows, and the global transactions'
   * states to their number: each completed one leaves a Try and a Confirm of each branch.
   */
  public Map<String, Long> counts() throws java.sql.SQLException {
    Map<String, Long> counts = new java.util.TreeMap<>();
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SELECT branch || ' ' || operation, count(*) FROM bench_branch"
            + " GROUP BY 1 UNION ALL SELECT state, count(*) FROM converge_saga GROUP BY 1")) {
      while (rs.next()) {
        counts.put(rs.getString(1), rs.getLong(2));
      }
    }
    return counts;
  }

  @Override
  public void close() throws Exception {
    teardown.close();
  }

  /**
   * The coordinator's reply handler, telling the waiting worker when the last Confirm's success reply was applied:
   * when {@link IdempotentHandler#handle} returns, the transition it caused (the completion) has committed.
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
      if (outcome == Outcome.PROCESSED && LAST.equals(message.header(SagaHeaders.STEP))
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
