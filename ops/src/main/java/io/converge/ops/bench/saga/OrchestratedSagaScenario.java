package io.converge.ops.bench.saga;

import io.converge.consumer.IncomingMessage;
import io.converge.core.Migrations;
import io.converge.ops.bench.BenchEnv;
import io.converge.producer.TxnProducer;
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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
public final class OrchestratedSagaScenario extends CoordinatorScenario {

  /** The names of the scenarios, one per backend. */
  public static final List<String> NAMES = List.of("saga-orchestrated-rocketmq", "saga-orchestrated-outbox",
      "saga-orchestrated-pulsar");

  private static final List<String> STEPS = List.of("reserve", "debit", "ship");

  private SagaDefinition<String> definition;
  private SagaCoordinator coordinator;

  private OrchestratedSagaScenario(String backend) {
    super("saga-orchestrated-" + backend, "saga", backend, "bench-saga");
  }

  /** The scenario called {@code name}, one of {@link #NAMES}. */
  public static OrchestratedSagaScenario named(String name) {
    if (!NAMES.contains(name)) {
      throw new IllegalArgumentException("orchestrated saga scenario must be one of " + NAMES + ", but was " + name);
    }
    return new OrchestratedSagaScenario(name.substring("saga-orchestrated-".length()));
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
    String replies = topic(env, "saga-replies");
    Map<String, String> commands = new LinkedHashMap<>();
    Map<String, String> compensations = new LinkedHashMap<>();
    for (String step : STEPS) {
      commands.put(step, topic(env, "saga-" + step));
      compensations.put(step, topic(env, "saga-" + step + "-undo"));
    }
    List<String> all = new ArrayList<>(List.of(replies));
    all.addAll(commands.values());
    all.addAll(compensations.values());
    TxnProducer producer = producer(env, pool, all);

    SagaDefinition.Builder<String> b = SagaDefinition.builder("bench-order", SagaCodec.json());
    for (String step : STEPS) {
      b.remote(step, s -> s.participant(step).command(commands.get(step), SagaCodec::utf8)
          .compensation(compensations.get(step), SagaCodec::utf8).timeout(Duration.ofSeconds(30)));
    }
    definition = b.deadline(Duration.ofMinutes(5)).build();
    coordinator = teardown.add(SagaCoordinator.builder().producer(producer).definitions(definition)
        .replyTopic(replies).replyGroup("bench-saga-coordinator-" + run).build(), SagaCoordinator::close);
    consumeReplies(env, replies, coordinator, STEPS.get(STEPS.size() - 1), threads);
    for (String step : STEPS) {
      SagaParticipant participant = SagaParticipant.builder(step).producer(producer)
          .step(step, (c, m) -> work(c, m, step, "forward"))
          .compensation(step, (c, m) -> work(c, m, step, "compensate")).build();
      consume(env, commands.get(step), participant.handler("bench-" + step + "-" + run), threads);
      consume(env, compensations.get(step), participant.handler("bench-" + step + "-undo-" + run), 1);
    }
    coordinator.startPolling();
  }

  @Override
  protected void start(String id) {
    coordinator.start(definition, id, "{}");
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
}
