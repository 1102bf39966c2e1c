package io.converge.ops.bench.converge;

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
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * A message handler that inserts one business row, called the way a consumer binding calls it:
 * {@code consumer-plain} runs it in a plain transaction (no dedup), {@code consumer-idem} through the
 * {@link IdempotentHandler} decorator (claim + handler in one transaction) with a new message id each
 * time, {@code consumer-idem-pipelined} the same with the claim sent with the handler's first statement
 * ({@code claimWithFirstStatement}), {@code consumer-idem-duplicates} redelivers ids already processed (the rate of duplicate
 * skips). The broker is left out on purpose: it is the same for all three and would only add noise
 * to the comparison of what dedup costs.
 */
public final class ConsumerScenario extends NamedScenario {

  /** How the handler is called. */
  public enum Mode {
    PLAIN, IDEMPOTENT, PIPELINED, DUPLICATES
  }

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
      case PIPELINED -> "consumer-idem-pipelined";
      case DUPLICATES -> "consumer-idem-duplicates";
    };
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    pool = env.newPool("bench_consumer", threads + 2);
    BenchOrders.create(pool);
    Migrations.apply(pool, "consumer");
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
      case IDEMPOTENT, PIPELINED -> require(idempotent.handle(message(MessageIds.shared().next())), Outcome.PROCESSED);
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
