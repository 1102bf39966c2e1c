package io.converge.ops.bench.tcc;

import io.converge.consumer.IncomingMessage;
import io.converge.core.Migrations;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.saga.CoordinatorScenario;
import io.converge.producer.TxnProducer;
import io.converge.saga.SagaCodec;
import io.converge.saga.SagaCoordinator;
import io.converge.saga.TccDefinition;
import io.converge.saga.tcc.TccHeaders;
import io.converge.saga.tcc.TccParticipant;
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
public final class TccGlobalScenario extends CoordinatorScenario {

  /** The names of the scenarios, one per backend. */
  public static final List<String> NAMES = List.of("tcc-global-rocketmq", "tcc-global-outbox", "tcc-global-pulsar");

  private static final List<String> BRANCHES = List.of("out", "in");
  private static final String LAST = BRANCHES.get(BRANCHES.size() - 1) + TccDefinition.CONFIRM_SUFFIX;

  private TccDefinition<String> definition;
  private DataSource pool;
  private SagaCoordinator coordinator;

  private TccGlobalScenario(String backend) {
    super("tcc-global-" + backend, "global", backend, "bench-tcc");
  }

  /** The scenario called {@code name}, one of {@link #NAMES}. */
  public static TccGlobalScenario named(String name) {
    if (!NAMES.contains(name)) {
      throw new IllegalArgumentException("TCC global scenario must be one of " + NAMES + ", but was " + name);
    }
    return new TccGlobalScenario(name.substring("tcc-global-".length()));
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
    String replies = topic(env, "tcc-replies");
    Map<String, String> topics = new LinkedHashMap<>();
    for (String branch : BRANCHES) {
      topics.put(branch, topic(env, "tcc-" + branch));
    }
    List<String> all = new ArrayList<>(List.of(replies));
    all.addAll(topics.values());
    TxnProducer producer = producer(env, pool, all);

    TccDefinition.Builder<String> b = TccDefinition.builder("bench-transfer", SagaCodec.json())
        .globalTimeout(Duration.ofMinutes(5));
    for (String branch : BRANCHES) {
      b.branch(branch, s -> s.messages(topics.get(branch)).timeout(Duration.ofSeconds(30)));
    }
    definition = b.build();
    coordinator = teardown.add(SagaCoordinator.builder().producer(producer).tcc(definition)
        .replyTopic(replies).replyGroup("bench-tcc-coordinator-" + run).build(), SagaCoordinator::close);
    consumeReplies(env, replies, coordinator, LAST, threads);
    for (String branch : BRANCHES) {
      TccParticipant participant = TccParticipant.builder(branch).producer(producer)
          .branch(branch, (c, m) -> work(c, m, branch), (c, m) -> work(c, m, branch), (c, m) -> work(c, m, branch))
          .build();
      consume(env, topics.get(branch), participant.handler("bench-tcc-" + branch + "-" + run), threads);
    }
    coordinator.startPolling();
  }

  @Override
  protected void start(String id) {
    coordinator.start(definition, id, "{}");
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
}
