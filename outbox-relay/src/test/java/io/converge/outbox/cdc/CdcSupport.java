package io.converge.outbox.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.outbox.Deliveries;
import io.converge.outbox.RelayBed;
import io.converge.outbox.RelayFixture;
import io.converge.core.Envelope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.rocketmq.common.message.MessageExt;

/** Test support for the CDC relay ITs: waits on the replication slot, deliveries by key. */
final class CdcSupport {

  private CdcSupport() {
  }

  /** An outbox schema for a child JVM's relay: its data source and its name. */
  record Schema(DataSource ds, String name) {
  }

  /** A fresh outbox schema ({@link RelayFixture#newOutbox()}) with its name. */
  static Schema newSchema() throws Exception {
    DataSource ds = RelayFixture.newOutbox();
    return new Schema(ds, RelayFixture.string(ds, "SELECT current_schema()"));
  }

  /** Waits until slot {@code slot} is read by a walsender (the engine streams), within 60 s. */
  static void awaitSlotActive(DataSource ds, String slot) {
    await("slot " + slot + " active within 60 s").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
        .until(() -> slotCount(ds, slot, "active") == 1);
  }

  /** Waits until no walsender reads slot {@code slot} (a closed engine's is gone), within 30 s. */
  static void awaitSlotInactive(DataSource ds, String slot) {
    await("walsender of " + slot + " gone").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
        .until(() -> slotCount(ds, slot, "active") == 0);
  }

  /** Waits until slot {@code slot} confirmed everything written so far (its offsets are flushed), within 60 s. */
  static void awaitSlotConfirmedNow(DataSource ds, String slot) throws Exception {
    String written = RelayFixture.string(ds, "SELECT pg_current_wal_lsn()::text");
    await("slot " + slot + " confirmed past " + written).atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> slotCount(ds, slot, "confirmed_flush_lsn >= '" + written + "'::pg_lsn") == 1);
  }

  private static long slotCount(DataSource ds, String slot, String condition) throws Exception {
    return RelayFixture.scalar(ds,
        "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND " + condition);
  }

  /** Delivered ids of each key, in queue order; and no id twice. */
  static Map<String, List<String>> byKey(Deliveries deliveries) {
    List<MessageExt> raw = deliveries.raw();
    assertThat(raw.stream().map(m -> m.getUserProperty(Envelope.MESSAGE_ID)).distinct().count())
        .as("no duplicates").isEqualTo(raw.size());
    return raw.stream().sorted(Comparator.comparingLong(MessageExt::getQueueOffset))
        .collect(Collectors.groupingBy(m -> m.getUserProperty(Envelope.KEY),
            Collectors.mapping(m -> m.getUserProperty(Envelope.MESSAGE_ID), Collectors.toList())));
  }

  /** The ids a test committed, in commit order: all of them and each key's. Not thread-safe. */
  static final class Committed {

    final List<String> all = new ArrayList<>();
    private final Map<String, List<String>> byKey = new HashMap<>();

    /** Records {@code id}, committed under {@code key}, after the ones before it. */
    void add(String key, String id) {
      byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(id);
      all.add(id);
    }

    /** Publishes {@code rows} rows on {@code bed}, one transaction each, over keys {@code cart-0} to {@code cart-(keys-1)}. */
    void publish(RelayBed bed, int rows, int keys) {
      for (int i = 0; i < rows; i++) {
        String key = "cart-" + (i % keys);
        add(key, bed.publish(key));
      }
    }

    /** Asserts that each key's ids were delivered in commit order ({@link #byKey(Deliveries)}: none twice). */
    void assertKeyOrder(Deliveries deliveries) {
      Map<String, List<String>> delivered = byKey(deliveries);
      byKey.forEach((key, ids) -> assertThat(delivered.get(key)).as("order of %s", key).containsExactlyElementsOf(ids));
    }
  }
}
