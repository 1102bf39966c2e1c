package io.converge.outbox;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.Envelope;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Per-key commit order, whatever the application locks: T1 writes its message of key K first but
 * commits after T2 wrote (and tried to commit) a message of K. Consumers must see K's messages in
 * commit order. Without a lock of the key held from the seq's draw to the commit, T2 commits first with the higher
 * seq and the relay, finding both, sends T1's first: the reverse of the commit order. A unit now writes its rows when
 * it commits, so in the first test T2 commits first (T1 holds no lock while it runs); the second holds T1's commit
 * after its insert, where the key's lock makes T2 wait.
 */
@ExtendWith({RocketMQExtension.class, RelayBed.Extension.class})
class CommitOrderIT {

  @Test
  void deliveryOrderOfAKeyIsItsCommitOrder(RelayBed bed) throws Exception {
    AtomicReference<String> t1Id = new AtomicReference<>();
    java.util.concurrent.atomic.AtomicInteger t1Pid = new java.util.concurrent.atomic.AtomicInteger();
    AtomicReference<String> t2Id = new AtomicReference<>();
    CountDownLatch t1Wrote = new CountDownLatch(1);
    CountDownLatch t1MayCommit = new CountDownLatch(1);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread t1 = new Thread(() -> {
      try {
        String id = bed.producer.inTransaction(tx -> {
          String m = tx.publish(OutgoingMessage.builder(bed.topic).key("K").payload("t1".getBytes(UTF_8)).build());
          try (java.sql.Statement st = tx.connection().createStatement();
              java.sql.ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            t1Pid.set(rs.getInt(1));
          }
          t1Wrote.countDown();
          if (!t1MayCommit.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("T1 never released");
          }
          return m;
        });
        t1Id.set(id);
      } catch (Throwable e) {
        failure.set(e);
      }
    });
    Thread t2 = new Thread(() -> {
      try {
        t2Id.set(bed.publish("K", "t2".getBytes(UTF_8)));
      } catch (Throwable e) {
        failure.set(e);
      }
    });
    t1.start();
    assertThat(t1Wrote.await(30, TimeUnit.SECONDS)).isTrue();
    t2.start();
    // T2 either commits at once (no key lock) or waits for T1's lock: wait for one of them
    AtomicBoolean t2Waited = new AtomicBoolean();
    await("T2 commits or waits within 30 s").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
        .until(() -> {
          // a session waiting for an advisory lock that T1's session holds: T2 on K's lock, nothing else
          if (bed.scalar("SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'advisory'"
              + " AND " + t1Pid.get() + " = ANY (pg_blocking_pids(pid))") > 0) {
            t2Waited.set(true);
          }
          return t2Waited.get() || !t2.isAlive();
        });
    t1MayCommit.countDown();
    t1.join(30_000);
    t2.join(30_000);
    assertThat(failure.get()).isNull();
    // The commit order is known from what T2 did while T1 held its transaction open, never from which
    // thread returned first afterwards (T2's commit can return before T1's thread records its own):
    // T2 waiting for K's lock commits after T1; T2 done before T1 was released committed first.
    List<String> commitOrder = t2Waited.get() ? List.of(t1Id.get(), t2Id.get()) : List.of(t2Id.get(), t1Id.get());
    assertThat(commitOrder).doesNotContainNull();

    try (OutboxRelay relay = bed.relay(bed.sink().build()).build()) {
      relay.start();
      bed.deliveries.awaitAll(commitOrder, Duration.ofSeconds(60));
    }
    List<String> delivered = bed.deliveries.raw().stream().sorted(Comparator.comparingLong(MessageExt::getQueueOffset))
        .map(m -> m.getUserProperty(Envelope.MESSAGE_ID)).toList();
    assertThat(delivered).as("delivery order of key K = its commit order").containsExactlyElementsOf(commitOrder);
  }

  /**
   * The same race where it can still happen now that a unit writes its rows when it commits: T1's commit is held
   * after its row of K drew its seq (a test trigger on the outbox waits for a gate the test holds) while T2 writes
   * and commits a message of K. Without the key's lock T2 commits first with the higher seq, and the relay, finding
   * both, sends T1's first: the reverse of the commit order. With it T2 waits until T1 committed. T1 publishes two
   * keys and T2 one, so both of the write's lock statements are under test: T1's multi-message one takes the lock
   * T2's one-message one must wait for (without either lock T2 does not wait).
   */
  @Test
  void deliveryOrderOfAKeyIsItsCommitOrderWhenTheFirstCommitIsHeldAfterItsInsert(RelayBed bed) throws Exception {
    RelayFixture.execute(bed.ds, """
        CREATE FUNCTION commit_gate() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.payload = convert_to('t1', 'UTF8') THEN
            PERFORM pg_advisory_xact_lock(4242);
          END IF;
          RETURN NULL;
        END $$""");
    RelayFixture.execute(bed.ds, "CREATE TRIGGER commit_gate AFTER INSERT ON converge_outbox FOR EACH ROW"
        + " EXECUTE FUNCTION commit_gate()");
    AtomicReference<String> t1Id = new AtomicReference<>();
    java.util.concurrent.atomic.AtomicInteger t1Pid = new java.util.concurrent.atomic.AtomicInteger();
    AtomicReference<String> t2Id = new AtomicReference<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    try (java.sql.Connection gate = bed.ds.getConnection(); java.sql.Statement g = gate.createStatement()) {
      g.execute("SELECT pg_advisory_lock(4242)");
      Thread t1 = new Thread(() -> {
        try {
          t1Id.set(bed.producer.inTransaction(tx -> {
            try (java.sql.Statement st = tx.connection().createStatement();
                java.sql.ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
              rs.next();
              t1Pid.set(rs.getInt(1));
            }
            // two keys: T1 takes its locks with the multi-message statement (LOCK_KEYS), T2 with the one-message one
            tx.publish(OutgoingMessage.builder(bed.topic).key("J").payload("j".getBytes(UTF_8)).build());
            return tx.publish(OutgoingMessage.builder(bed.topic).key("K").payload("t1".getBytes(UTF_8)).build());
          }));
        } catch (Throwable e) {
          failure.set(e);
        }
      });
      t1.start();
      await("T1 held in its commit after its insert").atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(20)).until(() -> t1Pid.get() != 0 && bed.scalar("SELECT count(*) FROM"
              + " pg_locks WHERE NOT granted AND locktype = 'advisory' AND pid = " + t1Pid.get()) > 0);
      Thread t2 = new Thread(() -> {
        try {
          t2Id.set(bed.publish("K", "t2".getBytes(UTF_8)));
        } catch (Throwable e) {
          failure.set(e);
        }
      });
      t2.start();
      AtomicBoolean t2Waited = new AtomicBoolean();
      await("T2 commits or waits within 30 s").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
          .until(() -> {
            if (bed.scalar("SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'advisory'"
                + " AND " + t1Pid.get() + " = ANY (pg_blocking_pids(pid))") > 0) {
              t2Waited.set(true);
            }
            return t2Waited.get() || !t2.isAlive();
          });
      g.execute("SELECT pg_advisory_unlock(4242)");
      t1.join(30_000);
      t2.join(30_000);
      assertThat(failure.get()).isNull();
      List<String> commitOrder = t2Waited.get() ? List.of(t1Id.get(), t2Id.get()) : List.of(t2Id.get(), t1Id.get());
      assertThat(commitOrder).doesNotContainNull();

      try (OutboxRelay relay = bed.relay(bed.sink().build()).build()) {
        relay.start();
        bed.deliveries.awaitAll(commitOrder, Duration.ofSeconds(60));
      }
      List<String> delivered = bed.deliveries.raw().stream()
          .filter(m -> !"j".equals(new String(m.getBody(), UTF_8))) // key J may be on another queue
          .sorted(Comparator.comparingLong(MessageExt::getQueueOffset))
          .map(m -> m.getUserProperty(Envelope.MESSAGE_ID)).toList();
      assertThat(delivered).as("delivery order of key K = its commit order").containsExactlyElementsOf(commitOrder);
    }
  }

  /**
   * Two units publishing the same two keys in opposite orders, both open at once, both commit: a unit takes its
   * keys' locks when it commits, in one order for every unit. When each publish took its key's lock at once, T1
   * held A and waited for B while T2 held B and waited for A, and PostgreSQL aborted one of them as a deadlock.
   */
  @Test
  void unitsPublishingTheSameKeysInOppositeOrdersDoNotDeadlock() throws Exception {
    DataSource ds = RelayFixture.newOutbox();
    String topic = RocketMQExtension.uniqueTopic("keyorder");
    try (TxnProducer p = RelayFixture.producer(ds)) {
      CountDownLatch bothPublished = new CountDownLatch(2);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> units = new java.util.ArrayList<>();
      for (List<String> keys : List.of(List.of("A", "B"), List.of("B", "A"))) {
        units.add(new Thread(() -> {
          try {
            p.inTransaction(tx -> {
              for (String key : keys) {
                tx.publish(OutgoingMessage.builder(topic).key(key).payload(key.getBytes(UTF_8)).build());
              }
              bothPublished.countDown();
              if (!bothPublished.await(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the other unit never published both keys");
              }
              return null;
            });
          } catch (Throwable e) {
            failure.set(e);
          }
        }));
      }
      units.forEach(Thread::start);
      for (Thread t : units) {
        t.join(60_000);
      }
      assertThat(failure.get()).as("both units commit").isNull();
      assertThat(RelayFixture.scalar(ds, "SELECT count(*) FROM converge_outbox")).isEqualTo(4);
    }
  }

  /**
   * A unit of work opened inside another on the same thread (what Spring's REQUIRES_NEW does) that
   * publishes the outer unit's key would wait for the outer unit's key lock, which its own thread holds:
   * PostgreSQL sees no deadlock (two sessions, one client thread), so it would hang for ever. It fails at
   * once, naming the key; the outer unit goes on and commits; another key in the inner unit is fine.
   */
  @Test
  void anInnerUnitOfTheSameThreadOnTheOuterUnitsKeyFailsAtOnceInsteadOfWaitingForItself() throws Exception {
    DataSource ds = RelayFixture.newOutbox();
    String topic = RocketMQExtension.uniqueTopic("selfwait");
    try (TxnProducer p = RelayFixture.producer(ds)) {
      AtomicReference<Throwable> inner = new AtomicReference<>();
      AtomicReference<String> otherKey = new AtomicReference<>();
      long start = System.nanoTime();
      p.inTransaction(tx -> {
        tx.publish(OutgoingMessage.builder(topic).key("K").payload("outer".getBytes(UTF_8)).build());
        try {
          RelayFixture.publish(p, topic, "K", "inner".getBytes(UTF_8));
        } catch (RuntimeException e) {
          inner.set(e);
        }
        otherKey.set(RelayFixture.publish(p, topic, "L", "inner-other-key".getBytes(UTF_8)));
        return null;
      });
      assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)).as("no wait for itself").isLessThan(30);
      assertThat(inner.get()).isInstanceOf(io.converge.core.ConvergeException.class)
          .hasMessageContaining("key 'K'").hasMessageContaining("wait for itself");
      assertThat(otherKey.get()).isNotNull();
      assertThat(RelayFixture.scalar(ds, "SELECT count(*) FROM converge_outbox WHERE order_key = 'K'")).isEqualTo(1);
      assertThat(RelayFixture.scalar(ds, "SELECT count(*) FROM converge_outbox WHERE order_key = 'L'")).isEqualTo(1);
    }
  }
}
