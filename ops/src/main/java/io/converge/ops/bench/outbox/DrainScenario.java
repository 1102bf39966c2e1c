package io.converge.ops.bench.outbox;

import io.converge.ops.bench.BenchEnv;
import io.converge.ops.db.FirstValue;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import io.converge.outbox.spi.SendAllResult;
import io.converge.core.Envelope;
import io.converge.core.rocketmq.RocketMQClients;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.sql.DataSource;
import org.apache.rocketmq.client.producer.DefaultMQProducer;

/**
 * A drain benchmark: the outbox is filled with N rows (not timed), then W relays drain it with
 * {@link OutboxRelay#drainOnce()} back to back until no row is unpublished; one result is rows per
 * second. {@code outbox-drain} sends into the embedded RocketMQ through {@link RocketMQSink};
 * {@code outbox-drain-sequential} sends one record at a time (as the relay did before pipelining);
 * {@code claim-mark} runs the same claim and mark SQL with a sink that sends nothing (the baseline:
 * what the database alone allows); {@code cdc-drain} reads the rows from the WAL with the CDC relay
 * ({@link CdcDrain}); the peer {@code debezium-outbox-drain} reads them with Debezium's own outbox event router and
 * a team's glue to RocketMQ ({@link DebeziumDrain}). Not thread-safe; used by {@link DrainBench}.
 */
public final class DrainScenario implements AutoCloseable {

  /** What the relays send to. */
  public enum Mode {

    /** The RocketMQ sink, end to end into the embedded broker. */
    ROCKETMQ("outbox-drain"),
    /** The RocketMQ sink one record at a time (the default {@code sendAll}): the relay before pipelining. */
    ROCKETMQ_SEQUENTIAL("outbox-drain-sequential"),
    /** A sink that reports every record sent without sending: claim + mark alone. */
    CLAIM_MARK("claim-mark"),
    /** The CDC relay ({@code CdcRelay}, Debezium on the WAL) into RocketMQ, catching up on the filled rows. */
    CDC("cdc-drain"),
    /** The peer: Debezium's engine and outbox event router with a team's glue to RocketMQ ({@link DebeziumDrain}). */
    DEBEZIUM("debezium-outbox-drain");

    private final String scenario;

    Mode(String scenario) {
      this.scenario = scenario;
    }
  }

  /** The number of distinct keys of the filled rows (row i has key {@code k-(i mod KEYS)}). */
  static final int KEYS = 1000;
  private static final String FILL = """
      INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, msg_key, header_names, header_values, payload)
      SELECT id, 'bench', ?, k, k, ARRAY[?, ?], ARRAY[id, k], ?
      FROM (SELECT gen_random_uuid()::text AS id, 'k-' || (i % ?) AS k FROM generate_series(1, ?) i) AS r
      """;
  private static final String UNPUBLISHED = "SELECT count(*) FROM converge_outbox WHERE published_at IS NULL";
  private static final byte[] PAYLOAD = new byte[1024];

  private final Mode mode;
  private final int batchSize;
  private final List<OutboxRelay> relays = new ArrayList<>();
  private CdcDrain cdc;
  private DebeziumDrain debezium;
  private DefaultMQProducer debeziumProducer;
  private DataSource pool;
  private String topic;
  private ExecutorService workers;

  /** A scenario of {@code mode} whose relays claim {@code batchSize} key heads per cycle. */
  public DrainScenario(Mode mode, int batchSize) {
    this.mode = mode;
    this.batchSize = batchSize;
  }

  /** The scenario's name on the command line. */
  public String name() {
    return mode.scenario;
  }

  /** Whether {@code name} is a drain scenario. */
  public static boolean isDrain(String name) {
    for (Mode m : Mode.values()) {
      if (m.scenario.equals(name)) {
        return true;
      }
    }
    return false;
  }

  /** The mode of the scenario {@code name}; see {@link #isDrain}. */
  public static Mode mode(String name) {
    for (Mode m : Mode.values()) {
      if (m.scenario.equals(name)) {
        return m;
      }
    }
    throw new IllegalArgumentException("not a drain scenario: " + name);
  }

  /** Creates the schema, topic and {@code relayCount} relays. */
  public void setUp(BenchEnv env, int relayCount) {
    pool = env.newPool("bench_" + mode.scenario.replace('-', '_'), relayCount + 2);
    Migrations.apply(pool, "outbox");
    topic = mode == Mode.CLAIM_MARK ? "bench-nowhere" : env.platform().newTopic("bench-drain");
    if (mode == Mode.CDC) {
      cdc = CdcDrain.prepare(env, pool);
      return;
    }
    if (mode == Mode.DEBEZIUM) {
      DefaultMQProducer producer = RocketMQClients.startProducer(env.platform().rocketmq().nameServerAddress(),
          "bench-debezium-" + System.nanoTime());
      debeziumProducer = producer;
      try {
        debezium = DebeziumDrain.prepare(env, pool, producer);
      } catch (Exception e) {
        throw new IllegalStateException("debezium-outbox-drain: cannot start Debezium's engine", e);
      }
      return;
    }
    for (int i = 0; i < relayCount; i++) {
      OutboxSink sink = switch (mode) {
        case ROCKETMQ ->
          RocketMQSink.nameServer(env.platform().rocketmq().nameServerAddress()).group("bench-drain-" + i).build();
        case ROCKETMQ_SEQUENTIAL -> new OneByOne(
            RocketMQSink.nameServer(env.platform().rocketmq().nameServerAddress()).group("bench-drain-seq-" + i)
                .build());
        case CLAIM_MARK -> new NoSend();
        case CDC, DEBEZIUM -> throw new IllegalStateException("not a polling relay");
      };
      relays.add(OutboxRelay.builder().name(mode.scenario + "-" + i).dataSource(pool).sink(sink)
          .batchSize(batchSize).purgeInterval(java.time.Duration.ZERO).build());
    }
    workers = Executors.newFixedThreadPool(relayCount, r -> {
      Thread t = new Thread(r, "bench-" + mode.scenario);
      t.setDaemon(true);
      return t;
    });
  }

  /** Empties the outbox and writes {@code rows} unpublished rows (not timed). */
  public void fill(int rows) throws Exception {
    try (Connection c = pool.getConnection()) {
      try (Statement s = c.createStatement()) {
        s.execute("TRUNCATE converge_outbox");
      }
      try (PreparedStatement ps = c.prepareStatement(FILL)) {
        ps.setString(1, topic);
        ps.setString(2, Envelope.MESSAGE_ID);
        ps.setString(3, Envelope.KEY);
        ps.setBytes(4, PAYLOAD);
        ps.setInt(5, KEYS);
        ps.setInt(6, rows);
        ps.executeUpdate();
      }
      try (Statement s = c.createStatement()) {
        s.execute("VACUUM ANALYZE converge_outbox");
      }
    }
    if (debezium != null) {
      debezium.filled(rows);
    }
  }

  /** Drains the outbox with every relay until no row is unpublished; returns rows per second. */
  public double drain(int rows) throws Exception {
    if (mode == Mode.CDC) {
      return cdc.drain(rows);
    }
    if (mode == Mode.DEBEZIUM) {
      return debezium.drain(rows);
    }
    long start = System.nanoTime();
    do {
      List<Future<?>> done = new ArrayList<>();
      for (OutboxRelay relay : relays) {
        done.add(workers.submit(() -> {
          while (relay.drainOnce() > 0) {
            // back to back while there is work, as a started relay does
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } while (unpublished() > 0);
    return rows / ((System.nanoTime() - start) / 1e9);
  }

  /** The rows not delivered yet: unpublished outbox rows; for the Debezium peer (which marks none), rows unsent. */
  long unpublished() throws Exception {
    return debezium != null ? debezium.unsent() : unpublished(pool);
  }

  /** The outbox rows of {@code pool} not published yet. */
  static long unpublished(DataSource pool) throws Exception {
    return FirstValue.ofLong(pool, UNPUBLISHED);
  }

  @Override
  public void close() {
    relays.forEach(OutboxRelay::close);
    if (cdc != null) {
      cdc.close();
    }
    if (debezium != null) {
      try {
        debezium.close();
      } catch (Exception e) {
        throw new IllegalStateException("debezium-outbox-drain: cannot drop its slot", e);
      } finally {
        debeziumProducer.shutdown();
      }
    }
    if (workers != null) {
      workers.shutdownNow();
    }
  }

  /** Only {@code send}: the relay goes through the default, one-at-a-time {@code sendAll}. */
  private record OneByOne(OutboxSink delegate) implements OutboxSink {

    @Override
    public String name() {
      return delegate.name();
    }

    @Override
    public void send(OutboxRecord record) throws Exception {
      delegate.send(record);
    }

    @Override
    public void close() {
      delegate.close();
    }
  }

  /** Sends nothing and reports every record stored: the relay's database work alone. */
  private static final class NoSend implements OutboxSink {

    @Override
    public String name() {
      return "none";
    }

    @Override
    public void send(OutboxRecord record) {
    }

    @Override
    public SendAllResult sendAll(List<OutboxRecord> records) {
      return new SendAllResult(records, List.of());
    }

    @Override
    public void close() {
    }
  }
}
