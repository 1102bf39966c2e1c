package io.converge.consumer;

import static io.converge.consumer.Db.count;
import static io.converge.consumer.Db.string;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.core.Envelope;
import io.converge.core.Migrations;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code IdempotentHandler.Builder.acceptSchema}: a message of a major version (or type) the consumer does not read, or
 * with a malformed {@code converge-schema}, is parked {@code SCHEMA_UNSUPPORTED} with the reason quoted, holding its
 * key, without an attempt or a retry; a held one released into the old consumer is parked in its place; once the
 * consumer is upgraded, a re-drive or a resume runs it and the messages held behind it follow in order.
 */
@ExtendWith(PostgresExtension.class)
class SchemaVersionIT {

  private static final List<String> TOPICS = List.of("orders");

  private static IncomingMessage order(String id, String key, String schema) {
    IncomingMessage.Builder b = IncomingMessage.builder().topic("orders").header(Envelope.MESSAGE_ID, id)
        .brokerKey(key).payload("{}");
    return schema == null ? b.build() : b.header(Envelope.SCHEMA, schema).build();
  }

  private static IdempotentHandler consumer(DataSource ds, List<String> ran, int... majors) {
    IdempotentHandler.Builder b = IdempotentHandler.builder().group("shipping").dataSource(ds).policy(Db.FAST)
        .handler((c, m) -> ran.add(m.envelopeMessageId()));
    for (int major : majors) {
      b.acceptSchema("order-created", major);
    }
    return b.build();
  }

  private static String row(DataSource ds, String id) {
    return string(ds, "SELECT status || ' ' || reason_code || ' ' || reason FROM converge_dlq WHERE message_id = '" + id
        + "' ORDER BY id DESC LIMIT 1");
  }

  @Test
  void anUnknownMajorHoldsItsKeyUntilTheUpgradedConsumerIsReDriven(DataSource ds) throws Exception {
    Migrations.apply(ds, "consumer");
    List<String> ran = new CopyOnWriteArrayList<>();
    IdempotentHandler v1 = consumer(ds, ran, 1);
    assertThat(v1.handle(order("o-1", "cust-1", "order-created/1.4"))).as("any minor").isEqualTo(Outcome.PROCESSED);
    assertThat(v1.handle(order("o-2", "cust-1", null))).as("no header: read").isEqualTo(Outcome.PROCESSED);
    assertThat(v1.handle(order("o-3", "cust-1", "order-created/2.0"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(row(ds, "o-3")).isEqualTo("PARKED SCHEMA_UNSUPPORTED 'order-created/2.0': major version 2 not read by"
        + " this consumer (it reads order-created/1.x)");
    assertThat(v1.handle(order("o-4", "cust-1", "order-created/2.1"))).isEqualTo(Outcome.HELD);
    assertThat(v1.handle(order("o-5", "cust-1", "order-created/1.0"))).isEqualTo(Outcome.HELD);
    assertThat(v1.handle(order("o-3", "cust-1", "order-created/2.0"))).as("a redelivery").isEqualTo(Outcome.DUPLICATE);
    assertThat(v1.handle(order("x-1", "cust-2", "order-created/1.x"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(row(ds, "x-1")).isEqualTo("PARKED SCHEMA_UNSUPPORTED malformed: converge-schema must be"
        + " <type>/<major>.<minor>, but was 'order-created/1.x'");
    assertThat(v1.handle(order("x-2", "cust-3", "refund-approved/1.0"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(row(ds, "x-2")).contains("type 'refund-approved' not read by this consumer");
    assertThat(count(ds, "SELECT count(*) FROM converge_consumer_attempt")).as("no attempt counted").isZero();
    assertThat(count(ds, "SELECT count(*) FROM converge_ticket")).isZero();

    // the old consumer still runs: discarding o-3 releases o-4 into it, which parks it at its place
    ConsumerOps ops = ConsumerOps.of(ds);
    assertThat(ops.discard(count(ds, "SELECT id FROM converge_dlq WHERE message_id = 'o-3'"))).isTrue();
    assertThat(v1.releaseHeld(TOPICS)).as("released, and parked at its place").isOne();
    assertThat(row(ds, "o-4")).startsWith("PARKED SCHEMA_UNSUPPORTED 'order-created/2.1'");
    long o4 = count(ds, "SELECT id FROM converge_dlq WHERE message_id = 'o-4'");
    assertThat(ops.redrive(o4)).isTrue();
    assertThat(v1.releaseHeld(TOPICS)).as("not read yet: the re-drive fails, the row stays parked").isZero();
    assertThat(row(ds, "o-4")).startsWith("PARKED REDRIVE_FAILED marked for re-drive (was SCHEMA_UNSUPPORTED");
    assertThat(ran).containsExactly("o-1", "o-2");

    // the upgraded consumer reads 1.x and 2.x: a re-drive runs o-4, then o-5 held behind it; a resume runs x-1's key
    IdempotentHandler v2 = consumer(ds, ran, 1, 2);
    assertThat(ops.redrive(o4)).isTrue();
    assertThat(v2.releaseHeld(TOPICS)).isEqualTo(2);
    assertThat(ran).containsExactly("o-1", "o-2", "o-4", "o-5");
    assertThat(v2.handle(order("o-6", "cust-1", "order-created/2.7"))).isEqualTo(Outcome.PROCESSED);
    long x2 = count(ds, "SELECT id FROM converge_dlq WHERE message_id = 'x-2'");
    assertThatThrownBy(() -> v2.resume(x2)).hasMessageContaining("type 'refund-approved' not read");
    assertThat(row(ds, "x-2")).as("a failed resume leaves it parked").startsWith("PARKED SCHEMA_UNSUPPORTED");

    IdempotentHandler strict = IdempotentHandler.builder().group("strict").dataSource(ds).handler((c, m) -> {
    })
        .acceptSchema("order-created", 1).requireSchema(true).build();
    assertThat(strict.handle(order("s-1", "cust-9", null))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(row(ds, "s-1")).isEqualTo("PARKED SCHEMA_UNSUPPORTED no converge-schema header, and this consumer"
        + " requires one (it reads order-created/1.x)");
    assertThatThrownBy(() -> IdempotentHandler.builder().acceptSchema("order created", 1))
        .hasMessage("consumer.acceptSchema.type must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}, but was order created");
  }
}
