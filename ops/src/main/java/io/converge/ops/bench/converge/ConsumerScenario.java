package io.converge.ops.bench.converge;

import io.converge.consumer.DedupPurger;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageHandler;
import io.converge.consumer.Outcome;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.BenchOrders;
import io.converge.ops.bench.NamedScenario;
import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import io.converge.core.Migrations;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * A message handler that inserts one business row, called the way a consumer binding calls it:
 * {@code consumer-plain} runs it in a plain transaction (no dedup), {@code consumer-idem} through the
 * {@link IdempotentHandler} decorator (claim + handler in one transaction) with a new message id each
 * time and no broker key, {@code consumer-idem-keyed} the same with a broker key (one of {@link #KEYS}: its claim
 * checks whether the key is held), {@code consumer-idem-pipelined} the same with the claim sent with the handler's first statement
 * ({@code claimWithFirstStatement}), {@code consumer-idem-duplicates} redelivers ids already processed (the rate of duplicate
 * skips), {@code consumer-idem-prefilled} is {@code consumer-idem} with {@code --prefill N} claims already in today's
 * partition of {@code converge_dedup} (the claim's cost on a full table; compare with {@code consumer-idem}). Every
 * dedup scenario runs the {@link DedupPurger} once first, so that today's partition exists. The broker is left out on purpose: it is the same for all three and would only add noise
 * to the comparison of what dedup costs.
 */
public final class ConsumerScenario extends NamedScenario {

  /** How the handler is called. */
  public enum Mode {
    PLAIN, IDEMPOTENT, KEYED, PIPELINED, DUPLICATES, PREFILLED
  }

  /** How many broker keys {@code consumer-idem-keyed} spreads its messages over. */
  static final int KEYS = 1000;

  // the prefilled claims: UUIDv7 texts of the last N milliseconds (each id left of the new ones in the primary key,
  // as a day's earlier claims are), in today's partition, inserted in one statement (the fastest way to have
  // millions of rows)
  private static final String PREFILL = """
      INSERT INTO converge_dedup (tenant, consumer_group, message_id, outcome, topic, processed_at, day)
      SELECT 'default', 'bench-consumer',
             substr(t, 1, 8) || '-' || substr(t, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3) || '-'
               || substr(r, 7, 12),
             'PROCESSED', 'bench', now(), (now() AT TIME ZONE 'UTC')::date
        FROM (SELECT lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint - ? + g), 12, '0') AS t,
                     md5(g::text) AS r
                FROM generate_series(1, ?) g) ids
      """;

  private static final byte[] PAYLOAD = "{\"order\":1,\"amount\":1999}"
      .getBytes(java.nio.charset.StandardCharsets.UTF_8);

  private final Mode mode;
  private final AtomicLong rows = new AtomicLong();
  private DataSource pool;
  private IdempotentHandler idempotent;
  private String[] processedIds;
  private final AtomicLong next = new AtomicLong();

  public ConsumerScenario(Mode mode) {
    super(name(mode), "msg");
    this.mode = mode;
  }

  private static String name(Mode mode) {
    return switch (mode) {
      case PLAIN -> "consumer-plain";
      case IDEMPOTENT -> "consumer-idem";
      case KEYED -> "consumer-idem-keyed";
      case PIPELINED -> "consumer-idem-pipelined";
      case DUPLICATES -> "consumer-idem-duplicates";
      case PREFILLED -> "consumer-idem-prefilled";
    };
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    pool = env.newPool("bench_consumer", threads + 2);
    BenchOrders.create(pool);
    Migrations.apply(pool, "consumer");
    if (mode != Mode.PLAIN) {
      new DedupPurger(pool, DedupPurger.DEFAULT_RETENTION, DedupPurger.DEFAULT_BATCH_SIZE, Clock.systemUTC())
          .purgeExpired(1);
    }
    if (mode == Mode.PREFILLED) {
      prefill(pool, env.prefill());
    }
    MessageHandler handler = (c, m) -> BenchOrders.insert(c, rows.incrementAndGet(), "customer");
    idempotent = IdempotentHandler.builder().group("bench-consumer").dataSource(pool).handler(handler)
        .claimWithFirstStatement(mode == Mode.PIPELINED).build();
    if (mode == Mode.DUPLICATES) {
      processedIds = new String[1000];
      for (int i = 0; i < processedIds.length; i++) {
        processedIds[i] = MessageIds.shared().next();
        idempotent.handle(message(processedIds[i]));
      }
    }
  }

  private static void prefill(DataSource pool, long rows) throws java.sql.SQLException {
    if (rows < 1) {
      throw new IllegalArgumentException("consumer-idem-prefilled needs --prefill N, N > 0, but was " + rows);
    }
    long started = System.nanoTime();
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(PREFILL);
        Statement s = c.createStatement()) {
      ps.setLong(1, rows);
      ps.setLong(2, rows);
      ps.executeUpdate();
      s.execute("VACUUM ANALYZE converge_dedup"); // a table that grew over days, not one just bulk-loaded
    }
    System.out.printf("prefilled %,d claims in today's partition in %.1f s%n", rows,
        (System.nanoTime() - started) / 1e9);
  }

  private static IncomingMessage message(String id) {
    return IncomingMessage.builder().topic("bench").header(Envelope.MESSAGE_ID, id).payload(PAYLOAD).build();
  }

  @Override
  public int runOnce(int worker) throws Exception {
    switch (mode) {
      case PLAIN -> {
        try (Connection c = pool.getConnection()) {
          c.setAutoCommit(false);
          BenchOrders.insert(c, rows.incrementAndGet(), "customer");
          c.commit();
        }
      }
      case IDEMPOTENT, PIPELINED, PREFILLED ->
        require(idempotent.handle(message(MessageIds.shared().next())), Outcome.PROCESSED);
      case KEYED -> {
        IncomingMessage m = IncomingMessage.builder().topic("bench")
            .header(Envelope.MESSAGE_ID, MessageIds.shared().next())
            .brokerKey("order-" + next.getAndIncrement() % KEYS).payload(PAYLOAD).build();
        require(idempotent.handle(m), Outcome.PROCESSED);
      }
      case DUPLICATES ->
        require(idempotent.handle(message(processedIds[(int) (next.getAndIncrement() % processedIds.length)])),
            Outcome.DUPLICATE);
    }
    return 1;
  }

  private static void require(Outcome actual, Outcome expected) {
    if (actual != expected) {
      throw new IllegalStateException("expected " + expected + " but the handler answered " + actual);
    }
  }

  @Override
  public void close() {
    // the pool is closed by the environment
  }
}
