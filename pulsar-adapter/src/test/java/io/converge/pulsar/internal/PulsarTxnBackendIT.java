package io.converge.pulsar.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.pulsar.PulsarSchemas;
import io.converge.core.Envelope;
import io.converge.core.InvalidMessageException;
import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.ProducerMetrics;
import io.converge.producer.internal.TxnLog;
import io.converge.pulsar.PulsarTxns;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.api.transaction.TxnID;
import java.sql.Savepoint;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Pulsar backend driven through its SPI, as {@code DefaultTxnProducer} drives it, against the embedded
 * Pulsar and PostgreSQL: savepoint rollback (issue 13.1); recovery that parks what Pulsar refuses without
 * blocking the rest, and claims each transaction for one instance (issue 13.6); recovery of the units an earlier
 * version logged in its own tables (issue 36.3: committed by id, re-published in their publish order, parked,
 * resumed, drained).
 */
@ExtendWith(PulsarExtension.class)
class PulsarTxnBackendIT {

  private DataSource db;

  @BeforeEach
  void schema() {
    db = PulsarSchemas.migrated("pulsarbk");
  }

  private BackendContext context(String group) {
    return new BackendContext(group, db, new TxnLog(db), Duration.ofSeconds(10), List.of(), ProducerMetrics.NONE,
        Clock.systemUTC());
  }

  private static PulsarSettings settings(EmbeddedPulsar pulsar) {
    return new PulsarSettings(pulsar.serviceUrl(), Duration.ofSeconds(15), Duration.ofSeconds(5), Duration.ofSeconds(3),
        Duration.ofMillis(300), null, 3);
  }

  /** A fresh short topic name (Converge's topic names have no scheme; Pulsar reads them as public/default). */
  private static String topic(String prefix) {
    String full = PulsarExtension.uniqueTopic(prefix);
    return full.substring(full.lastIndexOf('/') + 1);
  }

  private static OutgoingMessage message(String topic, String id) {
    return OutgoingMessage.builder(topic).id(id).key("k").header("h", id).payload(id.getBytes(UTF_8)).build();
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT) // own schema, topics and group: the tests overlap
  void messagesPublishedAfterARolledBackSavepointAreNeverDelivered(EmbeddedPulsar pulsar) throws Exception {
    String topic = topic("savepoint");
    String a = MessageIds.shared().next();
    String b = MessageIds.shared().next();
    String c = MessageIds.shared().next();
    String d = MessageIds.shared().next();
    String e = MessageIds.shared().next();
    String marker = MessageIds.shared().next();
    try (Received received = new Received(pulsar, topic);
        PulsarTxnBackend backend = new PulsarTxnBackend(context("g-" + UUID.randomUUID()), settings(pulsar))) {
      // A, savepoint, B, rollback to the savepoint, C, commit: A and C, never B
      unit(backend, tx -> {
        tx.publish(message(topic, a));
        tx.savepoint();
        tx.publish(message(topic, b));
        tx.rollbackToSavepoint(1);
        tx.publish(message(topic, c));
      });
      // everything published so far rolled back: D never, E alone
      unit(backend, tx -> {
        tx.savepoint();
        tx.publish(message(topic, d));
        tx.rollbackToSavepoint(0);
        tx.publish(message(topic, e));
      });
      unit(backend, tx -> tx.publish(message(topic, marker)));
      received.await(marker);
      // the marker was committed last: anything of the first two units would have come before it; watch a little more
      await("only A, C, E and the marker").during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
          .until(() -> received.ids().equals(List.of(a, c, e, marker)));
      assertThat(received.ids()).as("B and D were rolled back with their savepoints").containsExactly(a, c, e, marker);
      assertThat(received.headers.get(1)).as("C's properties").isEqualTo(c);
    }
  }

  @Test
  void aTransactionOpenedAheadThatOpensTooLateIsAbortedAndCloseWaitsForTheAborts(EmbeddedPulsar pulsar)
      throws Exception {
    // a slack of 5 s (20 - 5 margin - 10 local): transactions are opened ahead; a unit waits 500 ms for one
    PulsarSettings ahead = settings(pulsar).withTransactionTimeout(Duration.ofSeconds(20))
        .withSendTimeout(Duration.ofMillis(500));
    try (PulsarClient client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).enableTransaction(true)
        .build()) {
      Transaction late = client.newTransaction().withTransactionTimeout(20, TimeUnit.SECONDS).build()
          .get(10, TimeUnit.SECONDS);
      java.util.concurrent.CompletableFuture<Transaction> answer = new java.util.concurrent.CompletableFuture<>();
      PulsarTxnBackend backend = new PulsarTxnBackend(context("g-" + UUID.randomUUID()), ahead);
      TxnOpener.Prefetched next;
      try {
        backend.opener().addReady(new TxnOpener.Prefetched(answer, Instant.now(), System.nanoTime()));
        TxnOpener.Prefetched used = backend.opener().openForUnit(); // the one ahead does not answer: its own
        assertThat(used.txn()).isNotSameAs(answer);
        answer.complete(late); // the coordinator answers after all: that transaction must not stay open
        await().atMost(Duration.ofSeconds(5)).until(() -> late.getState() == Transaction.State.ABORTED);
        used.transaction().abort().get(5, TimeUnit.SECONDS);
        next = backend.opener().peekReady();
        assertThat(next).as("the unit opened the next one ahead").isNotNull();
        next.txn().get(5, TimeUnit.SECONDS);
      } finally {
        backend.close();
      }
      assertThat(next.transaction().getState()).as("close returned after aborting the one opened ahead")
          .isEqualTo(Transaction.State.ABORTED);
    }
  }

  /**
   * Issue 17 (review): a transaction opened on the spot (a unit with none ready, or the recovery's re-publish)
   * whose coordinator answers after the send timeout: the caller gets the timeout, and the transaction, opened
   * after all, is aborted; it stayed open until the coordinator's timeout before.
   */
  @Test
  void aTransactionOpenedOnTheSpotThatAnswersTooLateIsAborted(EmbeddedPulsar pulsar) throws Exception {
    PulsarSettings quick = settings(pulsar).withSendTimeout(Duration.ofMillis(300));
    try (PulsarClient client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).enableTransaction(true)
        .build()) {
      Transaction late = client.newTransaction().withTransactionTimeout(20, TimeUnit.SECONDS).build()
          .get(10, TimeUnit.SECONDS);
      java.util.concurrent.CompletableFuture<Transaction> answer = new java.util.concurrent.CompletableFuture<>();
      TxnOpener opener = new TxnOpener(() -> answer, quick, Duration.ofSeconds(10), Clock.systemUTC());
      assertThatThrownBy(opener::openNow).isInstanceOf(java.util.concurrent.TimeoutException.class);
      answer.complete(late); // the coordinator answers after all: that transaction must not stay open
      await().atMost(Duration.ofSeconds(5)).until(() -> late.getState() == Transaction.State.ABORTED);
      opener.close();
    }
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT) // own schema, topics and group: the tests overlap
  void aSendPulsarRefusesIsAnInvalidMessageNotAnOutage(EmbeddedPulsar pulsar) throws Exception {
    String dead = topic("send-terminated");
    terminate(pulsar, dead);
    String id = MessageIds.shared().next();
    try (PulsarTxnBackend backend = new PulsarTxnBackend(context("g-" + UUID.randomUUID()), settings(pulsar));
        Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      BackendTransaction btx = backend.begin();
      assertThatThrownBy(() -> btx.publish(message(dead, id), c))
          .isExactlyInstanceOf(InvalidMessageException.class)
          .hasMessageStartingWith("Pulsar refused message " + id + " on " + dead)
          .hasMessageContaining("TopicTerminated")
          .satisfies(e -> assertThat(((InvalidMessageException) e).messageId()).isEqualTo(id));
      c.rollback();
      btx.afterRollback();
    }
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT) // own schema, topics and group: the tests overlap
  void aTransactionPulsarRefusesIsParkedAfterItsAttemptsAndDoesNotBlockALaterOne(EmbeddedPulsar pulsar)
      throws Exception {
    String dead = topic("rec-terminated");
    String live = topic("rec-live");
    terminate(pulsar, dead);
    String group = "g-" + UUID.randomUUID();
    String refused = MessageIds.shared().next();
    String later = MessageIds.shared().next();
    try (PulsarClient client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).enableTransaction(true).build();
        Received received = new Received(pulsar, live)) {
      // the older transaction's topic refuses every write; the later one's is fine. The refused one was logged by an
      // earlier version (before pulsar migration V4): parked, listed and resumed all the same
      long[] first = loggedTimedOut(client, LogLayout.TXN, group, 20, message(dead, refused));
      loggedTimedOut(client, LogLayout.UNIT, group, 10, message(live, later));
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      try (PulsarTxnBackend backend = new PulsarTxnBackend(context(group),
          settings(pulsar).withMeterRegistry(registry))) {
        received.await(later);
        await().atMost(Duration.ofSeconds(30)).until(() -> PulsarTxns.on(db).parkedCount() == 1);
        assertThat(PulsarTxns.on(db).parked(10)).singleElement().satisfies(p -> {
          assertThat(p.id()).isEqualTo("(" + first[0] + "," + first[1] + ")");
          assertThat(p.group()).isEqualTo(group);
          assertThat(p.attempts()).isEqualTo(3);
          assertThat(p.messages()).isEqualTo(1);
          assertThat(p.reason()).startsWith("Pulsar refused message " + refused + " on " + dead)
              .contains("TopicTerminated");
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> registry.get("txn.pulsar.parked").gauge().value() == 1.0);
        assertThat(registry.get("txn.pulsar.open").gauge().value()).as("the later one was confirmed").isZero();
        assertThat(received.ids()).containsExactly(later);
        assertThat(PulsarSchemas.rows(db, "converge_pulsar_txn_message")).as("the parked one keeps its messages")
            .isOne();
        assertThat(PulsarTxns.on(db).resume(first[0], first[1])).isTrue();
        assertThat(PulsarTxns.on(db).resume(first[0], first[1])).as("resumed already").isFalse();
      }
    }
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT) // own schema, topics and group: the tests overlap
  void twoInstancesRecoveringTheSameTimedOutTransactionsRepublishEachOnce(EmbeddedPulsar pulsar) throws Exception {
    String topic = topic("rec-race");
    String group = "g-" + UUID.randomUUID();
    List<String> ids = new java.util.ArrayList<>();
    try (PulsarClient client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).enableTransaction(true).build();
        Received received = new Received(pulsar, topic)) {
      List<List<String>> units = new java.util.ArrayList<>();
      for (int i = 0; i < 20; i++) {
        // half of them logged by an earlier version (before pulsar migration V4), published in the reverse of their
        // ids' order: drained too, each in its publish order (seq)
        LogLayout layout = i % 2 == 0 ? LogLayout.UNIT : LogLayout.TXN;
        String x = MessageIds.shared().next();
        String y = MessageIds.shared().next();
        List<String> published = layout == LogLayout.UNIT ? List.of(x, y) : List.of(y, x);
        loggedTimedOut(client, layout, group, 30 - i, message(topic, published.get(0)),
            message(topic, published.get(1)));
        units.add(published);
        ids.addAll(published);
      }
      PulsarSettings fast = settings(pulsar).withRecoveryInterval(Duration.ofMillis(100));
      try (PulsarTxnBackend one = new PulsarTxnBackend(context(group), fast);
          PulsarTxnBackend two = new PulsarTxnBackend(context(group), fast)) {
        await().atMost(Duration.ofSeconds(60)).until(() -> received.ids().containsAll(ids));
        await().atMost(Duration.ofSeconds(10)).until(() -> openRows() == 0);
        await("no transaction re-published twice").during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
            .until(() -> received.ids().size() == ids.size());
      }
      assertThat(received.ids()).as("each timed-out transaction re-published by one instance").hasSize(ids.size())
          .containsExactlyInAnyOrderElementsOf(ids);
      for (List<String> unit : units) {
        assertThat(received.ids().indexOf(unit.get(0))).as("unit %s re-published in its publish order", unit)
            .isLessThan(received.ids().indexOf(unit.get(1)));
      }
      assertThat(PulsarSchemas.rows(db, "converge_pulsar_txn_message")).as("drained with their transactions").isZero();
    }
  }

  /**
   * A unit an instance of an earlier version (before pulsar migration V4) logged in its tables and did not commit on
   * Pulsar: its transaction, still open, is committed by id by this version's recovery, and its rows are deleted.
   */
  @Test
  @Execution(ExecutionMode.CONCURRENT) // own schema, topics and group: the tests overlap
  void anOpenTransactionAnEarlierVersionLoggedIsCommittedById(EmbeddedPulsar pulsar) throws Exception {
    String topic = topic("rec-v3");
    String group = "g-" + UUID.randomUUID();
    OutgoingMessage m = message(topic, MessageIds.shared().next());
    try (PulsarClient client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).enableTransaction(true).build();
        org.apache.pulsar.client.api.Producer<byte[]> producer = client.newProducer().topic(topic)
            .sendTimeout(0, TimeUnit.SECONDS).enableBatching(false).create();
        Received received = new Received(pulsar, topic)) {
      Transaction txn = client.newTransaction().withTransactionTimeout(60, TimeUnit.SECONDS).build().get();
      java.util.Map<String, String> properties = m.envelope(group, System.currentTimeMillis());
      producer.newMessage(txn).key(m.key()).properties(properties).value(m.payload()).send();
      log(LogLayout.TXN, txn.getTxnID(), group, 50, 5,
          List.of(new PulsarTxnStore.Logged(m.id(), topic, m.key(), properties, m.payload())));
      try (PulsarTxnBackend backend = new PulsarTxnBackend(context(group), settings(pulsar))) {
        received.await(m.id());
        await().atMost(Duration.ofSeconds(10)).until(() -> openRows() == 0);
      }
      assertThat(received.ids()).containsExactly(m.id());
      assertThat(PulsarSchemas.rows(db, "converge_pulsar_txn_message")).isZero();
    }
  }

  /**
   * Logs a unit of work that committed in the database {@code agoSeconds} ago and whose Pulsar transaction
   * the broker aborted (its deadline passed): what recovery finds after the owner died before its commit.
   */
  private long[] loggedTimedOut(PulsarClient client, LogLayout layout, String group, int agoSeconds,
      OutgoingMessage... messages) throws Exception {
    Transaction txn = client.newTransaction().withTransactionTimeout(30, TimeUnit.SECONDS).build().get();
    txn.abort().get();
    TxnID id = txn.getTxnID();
    List<PulsarTxnStore.Logged> logged = new java.util.ArrayList<>();
    for (OutgoingMessage m : messages) {
      logged.add(new PulsarTxnStore.Logged(m.id(), m.topic(), m.key(), m.envelope(group, System.currentTimeMillis()),
          m.payload()));
    }
    log(layout, id, group, -agoSeconds, agoSeconds + 20, logged);
    return new long[]{id.getMostSigBits(), id.getLeastSigBits()};
  }

  /**
   * Logs transaction {@code id} with {@code messages} (in publish order) in {@code layout}, its deadline
   * {@code deadlineSeconds} from now, as logged {@code createdSecondsAgo}: in {@link LogLayout#UNIT} as this version
   * does; in {@link LogLayout#TXN} with the statements of the version before pulsar migration V4.
   */
  private void log(LogLayout layout, TxnID id, String group, int deadlineSeconds, int createdSecondsAgo,
      List<PulsarTxnStore.Logged> messages) throws Exception {
    long most = id.getMostSigBits();
    long least = id.getLeastSigBits();
    try (Connection c = db.getConnection()) {
      if (layout == LogLayout.UNIT) {
        PulsarTxnStore.logWrite(most, least, group, Instant.now().plusSeconds(deadlineSeconds), Clock.systemUTC(),
            messages).write(c);
      } else {
        try (PreparedStatement ps = c.prepareStatement("""
            INSERT INTO converge_pulsar_txn (txn_most, txn_least, producer_group, deadline)
            VALUES (?, ?, ?, now() + ? * interval '1 second')""")) {
          ps.setLong(1, most);
          ps.setLong(2, least);
          ps.setString(3, group);
          ps.setInt(4, deadlineSeconds);
          ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("""
            INSERT INTO converge_pulsar_txn_message (message_id, txn_most, txn_least, topic, msg_key, properties,
                                                     payload, seq)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)""")) {
          int seq = 0;
          for (PulsarTxnStore.Logged m : messages) {
            List<String> flat = new java.util.ArrayList<>();
            m.properties().forEach((k, v) -> {
              flat.add(k);
              flat.add(v);
            });
            ps.setString(1, m.id());
            ps.setLong(2, most);
            ps.setLong(3, least);
            ps.setString(4, m.topic());
            ps.setString(5, m.key());
            ps.setArray(6, c.createArrayOf("text", flat.toArray()));
            ps.setBytes(7, m.payload());
            ps.setInt(8, seq++);
            ps.executeUpdate();
          }
        }
      }
      try (PreparedStatement ps = c.prepareStatement("UPDATE " + layout.table
          + " SET created_at = now() - make_interval(secs => ?) WHERE txn_most = ? AND txn_least = ?")) {
        ps.setInt(1, createdSecondsAgo);
        ps.setLong(2, most);
        ps.setLong(3, least);
        ps.executeUpdate();
      }
    }
  }

  private long openRows() {
    return PulsarSchemas.openRows(db);
  }

  /** Creates {@code topic} and terminates it through the admin REST API: it refuses every producer for good. */
  static void terminate(EmbeddedPulsar pulsar, String topic) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    String base = pulsar.httpUrl() + "/admin/v2/persistent/public/default/" + topic;
    HttpResponse<String> created = http
        .send(HttpRequest.newBuilder(URI.create(base)).PUT(HttpRequest.BodyPublishers.noBody())
            .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(created.statusCode()).as("create %s: %s", topic, created.body()).isBetween(200, 299);
    HttpResponse<String> terminated = http.send(HttpRequest.newBuilder(URI.create(base + "/terminate"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(terminated.statusCode()).as("terminate %s: %s", topic, terminated.body()).isBetween(200, 299);
  }

  /** One unit of work on a fresh connection: the body, then the backend's commit sequence. */
  private void unit(PulsarTxnBackend backend, Body body) throws Exception {
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      BackendTransaction btx = backend.begin();
      body.run(new Unit(c, btx));
      btx.beforeCommit(c);
      c.commit();
      btx.afterCommit();
    }
  }

  private interface Body {

    void run(Unit unit) throws Exception;
  }

  /** What {@code DefaultTxnProducer}'s context does: publish on the connection, savepoints on the connection. */
  private static final class Unit {

    private final Connection connection;
    private final BackendTransaction btx;
    private Savepoint savepoint;

    Unit(Connection connection, BackendTransaction btx) {
      this.connection = connection;
      this.btx = btx;
    }

    void publish(OutgoingMessage m) throws Exception {
      btx.publish(m, connection);
    }

    void savepoint() throws Exception {
      savepoint = connection.setSavepoint();
    }

    void rollbackToSavepoint(int kept) throws Exception {
      connection.rollback(savepoint);
      btx.rollbackToSavepoint(kept);
    }
  }

  /** Every message of a topic from the earliest, with its converge message id. */
  private static final class Received implements AutoCloseable {

    private final PulsarClient client;
    private final Consumer<byte[]> consumer;
    private final List<String> ids = new CopyOnWriteArrayList<>();
    final List<String> headers = new CopyOnWriteArrayList<>();

    Received(EmbeddedPulsar pulsar, String topic) throws Exception {
      client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).build();
      consumer = client.newConsumer().topic(topic).subscriptionName("check-" + UUID.randomUUID())
          .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
          .messageListener((cons, m) -> {
            ids.add(m.getProperty(Envelope.MESSAGE_ID));
            headers.add(m.getProperty("h"));
            cons.acknowledgeAsync(m);
          }).subscribe();
    }

    List<String> ids() {
      return List.copyOf(ids);
    }

    void await(String id) {
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> ids.contains(id));
    }

    @Override
    public void close() throws Exception {
      consumer.close();
      client.close();
    }
  }
}
