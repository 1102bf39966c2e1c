package io.converge.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.Envelope;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * {@code claimWithFirstStatement}: the claim travels with the handler's first statement, and still no
 * statement of the handler runs for a duplicate or a held key, concurrent copies have one effect, and the
 * handler's statements behave as on a plain connection (parameters, results, re-execution, savepoints).
 */
class PipelinedClaimIT extends LedgerTestBase {

  private static final FailurePolicy FAST = Db.FAST;

  PipelinedClaimIT(DataSource ds) {
    super(ds);
  }

  private IdempotentHandler handler(String group, MessageHandler h) {
    return IdempotentHandler.builder().group(group).dataSource(ds).policy(FAST).handler(h)
        .claimWithFirstStatement(true).build();
  }

  private static IncomingMessage message(String id, String key) {
    return IncomingMessage.builder().topic("payments").header(Envelope.MESSAGE_ID, id).brokerKey(key)
        .payload("{\"amount\":\"10.00\"}").build();
  }

  private long effects(String id) {
    return Db.effects(ds, id);
  }

  @Test
  void theHandlersStatementsSeeTheirParametersAndResultsAndADuplicateRunsNone() {
    List<String> echoed = new ArrayList<>();
    AtomicInteger entered = new AtomicInteger();
    IdempotentHandler h = handler("stmts", (c, m) -> {
      entered.incrementAndGet(); // code before the first statement: runs for a duplicate only when pipelined
      try (PreparedStatement ps = c.prepareStatement("SELECT ? || '-' || ?")) {
        ps.setString(1, m.envelopeMessageId());
        ps.setInt(2, 1);
        try (ResultSet rs = ps.executeQuery()) { // the first statement: carries the claim
          rs.next();
          echoed.add(rs.getString(1));
        }
        ps.setInt(2, 2); // executed again: the same SQL alone, the other parameter kept
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          echoed.add(rs.getString(1));
        }
      }
      Savepoint sp = c.setSavepoint();
      Db.insertLedger(c, m);
      c.rollback(sp);
      Db.insertLedger(c, m);
    });
    String id = UUID.randomUUID().toString();
    assertThat(h.handle(message(id, null))).isEqualTo(Outcome.PROCESSED);
    assertThat(echoed).containsExactly(id + "-1", id + "-2");
    for (int i = 0; i < 3; i++) {
      assertThat(h.handle(message(id, null))).isEqualTo(Outcome.DUPLICATE);
    }
    assertThat(echoed).as("the first statement of a duplicate never ran").hasSize(2);
    assertThat(entered).as("the claim travelled with the first statement: the handler was entered for each "
        + "duplicate (a separate claim would have refused them before the handler)").hasValue(4);
    assertThat(effects(id)).isEqualTo(1);

    String keyed = UUID.randomUUID().toString(); // its claim checks the key's hold: more parameters before the handler's
    assertThat(h.handle(message(keyed, "order-" + keyed))).isEqualTo(Outcome.PROCESSED);
    assertThat(h.handle(message(keyed, "order-" + keyed))).isEqualTo(Outcome.DUPLICATE);
    assertThat(echoed).containsExactly(id + "-1", id + "-2", keyed + "-1", keyed + "-2");
    assertThat(effects(keyed)).isEqualTo(1);
  }

  @Test
  void aHandlerThatRollsBackAndRetriesAfterARefusalCommitsNothing() {
    List<Throwable> refusals = new ArrayList<>();
    IdempotentHandler h = handler("retrying", (c, m) -> {
      try {
        Db.insertLedger(c, m);
      } catch (SQLException refused) {
        // a handler that retries on its own: rollback, run again, commit
        refusals.add(refused);
        try {
          c.rollback();
          Db.insertLedger(c, m);
          c.commit();
        } catch (SQLException again) {
          refusals.add(again);
          throw again;
        }
      }
    });
    String id = UUID.randomUUID().toString();
    assertThat(h.handle(message(id, null))).isEqualTo(Outcome.PROCESSED);
    assertThat(h.handle(message(id, null))).isEqualTo(Outcome.DUPLICATE);
    assertThat(effects(id)).as("the duplicate's retry committed nothing").isEqualTo(1);
    assertThat(refusals).hasSize(2).allSatisfy(e -> assertThat(e).isInstanceOf(ClaimRefusedException.class)
        .satisfies(r -> assertThat(((ClaimRefusedException) r).outcome()).isEqualTo(Outcome.DUPLICATE)));
  }

  @Test
  void concurrentCopiesOnTwoInstancesHaveOneEffect() throws Exception {
    String id = UUID.randomUUID().toString();
    MessageHandler slow = (c, m) -> {
      Db.insertLedger(c, m);
      Thread.sleep(150); // hold the uncommitted claim: the others must wait on the unique index
    };
    List<IdempotentHandler> instances = List.of(handler("conc", slow), handler("conc", slow));
    ExecutorService pool = Executors.newFixedThreadPool(10);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Outcome>> results = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      IdempotentHandler instance = instances.get(i % 2);
      results.add(pool.submit(() -> {
        go.await();
        return instance.handle(message(id, null));
      }));
    }
    go.countDown();
    Map<Outcome, Integer> outcomes = new ConcurrentHashMap<>();
    for (Future<Outcome> f : results) {
      outcomes.merge(f.get(30, TimeUnit.SECONDS), 1, Integer::sum);
    }
    pool.shutdown();
    assertThat(outcomes).containsOnly(Map.entry(Outcome.PROCESSED, 1), Map.entry(Outcome.DUPLICATE, 9));
    assertThat(effects(id)).isEqualTo(1);
  }

  @Test
  void aHeldKeyRunsNoStatementAndARefusalSwallowedByTheHandlerStillRollsBack() {
    AtomicInteger statements = new AtomicInteger();
    IdempotentHandler h = handler("held", (c, m) -> {
      if (m.header("poison") != null) {
        throw new IllegalStateException("cannot decode");
      }
      try {
        Db.insertLedger(c, m);
        statements.incrementAndGet();
      } catch (SQLException swallowed) {
        // a careless handler: the transaction is aborted all the same
      }
    });
    String key = "key-" + UUID.randomUUID();
    IncomingMessage head = Db.poisonedHead(key);
    assertThat(h.handle(head)).isEqualTo(Outcome.DEAD_LETTERED);
    String behind = UUID.randomUUID().toString();
    assertThat(h.handle(message(behind, key))).isEqualTo(Outcome.HELD);
    assertThat(statements).hasValue(0);
    assertThat(effects(behind)).isZero();
    assertThat(Db.count(ds, "SELECT count(*) FROM converge_dlq WHERE message_id = '" + behind
        + "' AND reason_code = 'HELD'")).isEqualTo(1);

    String id = UUID.randomUUID().toString();
    assertThat(h.handle(message(id, null))).isEqualTo(Outcome.PROCESSED);
    assertThat(h.handle(message(id, null))).isEqualTo(Outcome.DUPLICATE);
    assertThat(statements).hasValue(1);
    assertThat(effects(id)).isEqualTo(1);
  }

  @Test
  void aHandlerWithoutStatementsOrFailingBeforeItsFirstStillClaims() {
    AtomicInteger runs = new AtomicInteger();
    IdempotentHandler quiet = handler("quiet", (c, m) -> runs.incrementAndGet());
    String id = UUID.randomUUID().toString();
    assertThat(quiet.handle(message(id, null))).isEqualTo(Outcome.PROCESSED);
    assertThat(quiet.handle(message(id, null))).isEqualTo(Outcome.DUPLICATE);
    assertThat(Db.count(ds, "SELECT count(*) FROM converge_dedup WHERE consumer_group = 'quiet' AND message_id = '"
        + id + "'")).isEqualTo(1);

    // a duplicate whose handler fails before its first statement is a duplicate, not an attempt
    IdempotentHandler failing = handler("quiet", (c, m) -> {
      throw new IllegalStateException("upstream down");
    });
    assertThat(failing.handle(message(id, null))).isEqualTo(Outcome.DUPLICATE);
    assertThat(Db.count(ds, "SELECT count(*) FROM converge_consumer_attempt WHERE message_id = '" + id + "'"))
        .isZero();
  }
}
