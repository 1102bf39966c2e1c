package io.converge.outbox;

import static io.converge.outbox.RelayFixture.count;
import static io.converge.outbox.RelayFixture.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.producer.TxnProducer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The purge deletes only published rows older than the retention, in bounded batches: never an
 * unpublished row (however old), never a parked one, never a recently published one.
 */
class PurgeIT {

  @Test
  void purgeRemovesOnlyPublishedRowsOlderThanRetentionInBatches() throws Exception {
    DataSource ds = RelayFixture.newOutbox();
    try (TxnProducer p = RelayFixture.producer(ds)) {
      for (int i = 0; i < 260; i++) {
        RelayFixture.publish(p, "purge", "k-" + (i % 13));
      }
    }
    // 150 published two days ago, 50 published an hour ago, 50 old unpublished, 10 old parked
    execute(ds, "UPDATE converge_outbox SET created_at = now() - interval '3 days'");
    execute(ds,
        "UPDATE converge_outbox SET published_at = now() - interval '2 days' WHERE seq IN (SELECT seq FROM converge_outbox ORDER BY seq LIMIT 150)");
    execute(ds,
        "UPDATE converge_outbox SET published_at = now() - interval '1 hour' WHERE seq IN (SELECT seq FROM converge_outbox WHERE published_at IS NULL ORDER BY seq LIMIT 50)");
    execute(ds,
        "UPDATE converge_outbox SET parked_at = now() - interval '2 days', attempts = 5 WHERE seq IN (SELECT seq FROM converge_outbox WHERE published_at IS NULL ORDER BY seq DESC LIMIT 10)");

    List<Long> progress = new ArrayList<>();
    long purged = Outbox.on(ds).purge(Duration.ofDays(1), 40, progress::add);

    assertThat(purged).isEqualTo(150);
    assertThat(progress).as("four bounded batches").containsExactly(40L, 80L, 120L, 150L);
    assertThat(count(ds, "published_at < now() - interval '1 day'")).isZero();
    assertThat(count(ds, "published_at IS NOT NULL")).isEqualTo(50);
    assertThat(count(ds, "published_at IS NULL AND parked_at IS NULL")).isEqualTo(50);
    assertThat(count(ds, "parked_at IS NOT NULL")).isEqualTo(10);
    assertThat(Outbox.on(ds).purge(Duration.ofDays(1), 40, n -> {
    })).isZero();

    assertThatThrownBy(() -> Outbox.on(ds).purge(Duration.ofDays(1), 0, n -> {
    }))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("outbox.purgeBatchSize must be between 1 and 100000, but was 0");
  }
}
