package io.converge.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.Envelope;
import io.converge.producer.TxnProducer;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.rocketmq.common.message.MessageClientIDSetter;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A relay process is killed (Runtime.halt) in the middle of a batch, after it sent some rows and before
 * it marked them: its transaction dies with it, so those rows stay unpublished and a second relay sends
 * them again. Every committed row is delivered; the duplicates carry the same message id. A relay that
 * marked rows published before sending them (or in a separate, earlier transaction) would lose the
 * unsent rest of the batch and fail this test.
 */
@ExtendWith({RocketMQExtension.class, ChildJvmExtension.class})
class RelayKillIT {

  private static final int ROWS = 400;

  @Test
  void killMidBatchLosesNothing(EmbeddedRocketMQ mq, ChildJvms jvms) throws Exception {
    DataSource ds = RelayFixture.newOutbox();
    String schema = RelayFixture.string(ds, "SELECT current_schema()");
    String topic = RocketMQExtension.uniqueTopic("kill");
    mq.createTopic(topic);
    List<String> committed = new ArrayList<>();
    // the rows are written in a trace (its context stored with each row): the re-sent ones continue it too
    String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    try (TxnProducer p = RelayFixture.producer(ds);
        Scope ignored = Span.wrap(SpanContext.createFromRemoteParent(
            trace, "00f067aa0ba902b7", TraceFlags.getSampled(), TraceState.getDefault())).makeCurrent()) {
      for (int i = 0; i < ROWS; i++) {
        committed.add(RelayFixture.publish(p, topic, "cart-" + (i % 17)));
      }
    }
    try (Deliveries deliveries = new Deliveries(mq, topic)) {
      ConvergePostgres pg = ConvergePostgres.shared();
      ChildJvm child = jvms.launch(RelayChildMain.class).database(pg.jdbcUrl(), pg.user(), pg.password(), schema)
          .property("relay.nameServer", mq.nameServerAddress()).property("relay.haltAfter", 125).start();
      int exit = child.awaitExit(Duration.ofSeconds(90)); // fails with the output when the child did not exit
      String output = child.output();
      assertThat(exit).as("relay child halted mid-batch; output:%n%s", output).isEqualTo(ChildJvm.HALTED);
      assertThat(output).contains(RelayChildMain.HALTING + 125);
      // batches of 50: two were committed (100 rows), the third died after 25 sends
      assertThat(RelayFixture.count(ds, "published_at IS NOT NULL")).isEqualTo(100);

      try (OutboxRelay heir = RelayFixture.relay(ds, RelayFixture.sink(mq).build()).build()) {
        heir.start();
        deliveries.awaitAll(committed, Duration.ofSeconds(60));
        deliveries.awaitQuiet(Duration.ofSeconds(1)); // nothing more arrives before the duplicates are counted
      }
      // the relays' sends of each row: a send is one client message id (UNIQ_KEY); the RocketMQ client's own retry of
      // a send keeps it, a relay's send of the row again has a new one. The client retries when the broker closes its
      // connection, which it does on a frame it cannot decode (seen here: another connection's heartbeat inside a
      // send's header, apache/rocketmq#10911): a third copy on the wire that the relays did not send
      Map<String, Long> perId = deliveries.raw().stream()
          .collect(Collectors.groupingBy(m -> m.getUserProperty(Envelope.MESSAGE_ID), Collectors.collectingAndThen(
              Collectors.mapping(MessageClientIDSetter::getUniqID, Collectors.toSet()), s -> (long) s.size())));
      assertThat(perId.keySet()).containsExactlyInAnyOrderElementsOf(committed);
      long duplicated = perId.values().stream().filter(n -> n > 1).count();
      System.out.printf("kill -9 mid-batch: %d rows, %d deliveries, %d ids sent twice%n",
          ROWS, deliveries.raw().size(), duplicated);
      assertThat(duplicated).as("the rows sent by the dead relay before its halt come again, same id").isEqualTo(25);
      assertThat(RelayFixture.count(ds, "published_at IS NULL")).isZero();
      assertThat(deliveries.raw()).allSatisfy(
          m -> assertThat(m.getUserProperty(Envelope.TRACEPARENT)).startsWith("00-" + trace + "-"));
      assertThat(perId.values().stream().mapToLong(Long::longValue).max().orElseThrow()).as("sends of one row")
          .isLessThanOrEqualTo(2);
    }
  }
}
