package io.converge.ops.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.CliRun;
import io.converge.ops.CliSchema;
import org.junit.jupiter.api.Test;

/**
 * {@code converge dlq redrive ID} (the console's re-drive, one store operation for both): a parked dead letter is
 * marked for its consumer's handler, keeping its reason; a held, already marked or missing one exits 3. And
 * {@code converge console} refuses bad options before it serves anything.
 */
class RedriveCommandIT {

  @Test
  void aParkedDeadLetterIsMarkedForReDriveOnce() throws Exception {
    CliSchema db = CliSchema.create("redrivecli", "consumer");
    db.execute("INSERT INTO converge_dlq (tenant, consumer_group, topic, message_id, message_key, reason_code, reason,"
        + " attempts, headers, payload, status, created_at) VALUES"
        + " ('t1', 'billing', 'charges', 'm-dead', 'k', 'RETRIES_EXHAUSTED', 'deadlock', 8, '', '\\x00', 'PARKED', now()),"
        + " ('t1', 'billing', 'charges', 'm-held', 'k', 'HELD', 'behind a parked message of this key', 0, '', '\\x00',"
        + "  'PARKED', now())");
    long dead = db.count("SELECT id FROM converge_dlq WHERE message_id = 'm-dead'");
    long held = db.count("SELECT id FROM converge_dlq WHERE message_id = 'm-held'");

    CliRun redrive = db.run("dlq", "redrive", Long.toString(dead));
    assertThat(redrive.status()).as(redrive.err()).isZero();
    assertThat(redrive.out()).contains("marked dead letter " + dead + " for re-drive");
    assertThat(db.count("SELECT count(*) FROM converge_dlq WHERE id = " + dead + " AND status = 'PARKED'"
        + " AND reason_code = 'REDRIVE' AND reason = 'marked for re-drive (was RETRIES_EXHAUSTED: deadlock)'"))
        .isOne();
    db.run("dlq", "redrive", Long.toString(dead)).assertFails(3,
        "is not parked (or is held behind another, or already marked)");
    db.run("dlq", "redrive", Long.toString(held)).assertFails(3, "dead letter " + held + " is not parked");
    db.run("dlq", "redrive", "424242").assertFails(3, "dead letter 424242 is not parked");
  }

  @Test
  void theConsoleRefusesBadOptions() throws Exception {
    CliSchema db = CliSchema.create("consolecli");
    db.run("console", "--port", "70000").assertFails(2, "--port must be between 0 and 65535, but was 70000");
    db.run("console", "--threshold", "outbox-parked=soon").assertFails(2, "an age is 90s, 5m, 2h, 1d or ISO-8601");
    db.run("console", "--threshold", "parked=1m").assertFails(2, "the kind is one of [rocketmq-unit");
  }
}
