package io.converge.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.producer.schema.Migrations;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link ConsumerOps#redrive}: ops marks a parked message, and the consumer's release round
 * ({@link IdempotentHandler#releaseHeld()}, which the bindings run on a schedule) runs it through its handler,
 * then the messages held behind it, in order. A re-drive that fails leaves the row parked as
 * {@code REDRIVE_FAILED} with the failure (no retry loop), and it can be marked again.
 */
@ExtendWith(PostgresExtension.class)
class RedriveIT {

  @Test
  void aMarkedDeadLetterRunsThroughItsHandlerThenTheHeldOnesAndAFailedReDriveStaysParked(DataSource ds)
      throws Exception {
    Migrations.apply(ds, "consumer");
    AtomicBoolean failing = new AtomicBoolean(true);
    List<String> ran = new CopyOnWriteArrayList<>();
    IdempotentHandler handler = IdempotentHandler.builder().group("billing").dataSource(ds)
        .policy(FailurePolicy.defaults().withMaxAttempts(1).withBackoff(Duration.ofMillis(1), Duration.ofMillis(2)))
        .handler((c, m) -> {
          if (failing.get()) {
            throw new IllegalStateException("ledger locked");
          }
          ran.add(m.header("converge-message-id"));
        }).build();
    assertThat(handler.handle(message("charge-1"))).isEqualTo(Outcome.DEAD_LETTERED);
    assertThat(handler.handle(message("charge-2"))).as("behind the parked one").isEqualTo(Outcome.HELD);
    long dlqId = count(ds, "SELECT id FROM converge_dlq WHERE message_id = 'charge-1'");
    ConsumerOps ops = ConsumerOps.of(ds);

    assertThat(handler.releaseHeld()).as("nothing marked, nothing runs").isZero();
    assertThat(ops.redrive(dlqId)).isTrue();
    assertThat(ops.redrive(dlqId)).as("already marked").isFalse();
    assertThat(handler.releaseHeld()).as("the handler still fails").isZero();
    assertThat(count(ds, "SELECT count(*) FROM converge_dlq WHERE id = " + dlqId
        + " AND status = 'PARKED' AND reason_code = 'REDRIVE_FAILED' AND reason LIKE '%ledger locked%'")).isOne();
    assertThat(handler.releaseHeld()).as("a failed re-drive is not retried on its own").isZero();

    failing.set(false);
    assertThat(ops.redrive(dlqId)).as("marked again after the fix").isTrue();
    assertThat(handler.releaseHeld()).isEqualTo(2);
    assertThat(ran).containsExactly("charge-1", "charge-2");
    assertThat(count(ds, "SELECT count(*) FROM converge_dlq WHERE status = 'RESUMED'")).isEqualTo(2);
    assertThat(ops.redrive(dlqId)).as("no longer parked").isFalse();
  }

  private static IncomingMessage message(String id) {
    return IncomingMessage.builder().topic("charges").header("converge-message-id", id).brokerKey("cust-1")
        .payload("{}").build();
  }

  private static long count(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
