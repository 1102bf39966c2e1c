package io.converge.consumer.outage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What the outage ITs of the bindings share: a handler whose effect is a row in another database (the one the test
 * freezes), and the checks that every message was processed once after the outage with nothing parked.
 */
public final class OutageChecks {

  private OutageChecks() {
  }

  /**
   * A handler of {@code group} deduplicating in {@code dedup} with three attempts (backoff 100-200 ms, an outage
   * waited out in steps of at most 1 s) whose effect is a row {@code effects(message_id)} written on its own
   * connection of {@code effects}.
   */
  public static IdempotentHandler.Builder effectsHandler(String group, DataSource dedup, DataSource effects) {
    return IdempotentHandler.builder().group(group).dataSource(dedup)
        .policy(FailurePolicy.defaults().withMaxAttempts(3).withBackoff(Duration.ofMillis(100), Duration.ofMillis(200))
            .withMaxOutageBackoff(Duration.ofSeconds(1)))
        .handler((c, m) -> {
          try (var hc = effects.getConnection(); var ps = hc.prepareStatement("INSERT INTO effects VALUES (?)")) {
            ps.setString(1, m.envelopeMessageId());
            ps.executeUpdate();
          }
        });
  }

  /** A step of an outage test. */
  @FunctionalInterface
  public interface Step {

    void run() throws Exception;
  }

  /**
   * Begins an outage, sends {@code count} messages through {@code send} and waits (at most {@code maxOutage}) until
   * the handler met at least six failures (with the failure policy's three attempts per message, more than the
   * attempts allow), then ends the outage whatever happened. Asserts that the outage lasted at most
   * {@code maxOutage} plus {@code slack}; returns the ids sent.
   */
  public static List<String> sendDuringOutage(Step begin, Step end, int count, Callable<String> send,
      CountingMetrics metrics, Duration maxOutage, Duration slack) throws Exception {
    List<String> ids = new ArrayList<>();
    begin.run();
    long began = System.nanoTime();
    try {
      for (int i = 0; i < count; i++) {
        ids.add(send.call());
      }
      await().atMost(maxOutage).until(() -> metrics.failures() >= 6);
    } finally {
      end.run();
    }
    assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThanOrEqualTo(maxOutage.plus(slack));
    return ids;
  }

  /** Asserts that {@code group} processed every message it recorded, and parked or ticketed none. */
  public static void assertAllProcessedNoneParked(JdbcTemplate dedup, String group) {
    assertThat(dedup.queryForList("SELECT DISTINCT outcome FROM converge_dedup WHERE consumer_group = ?", String.class,
        group)).containsExactly("PROCESSED");
    assertThat(dedup.queryForObject("SELECT count(*) FROM converge_dlq WHERE consumer_group = ?", Long.class, group))
        .as("parked messages").isZero();
    assertThat(dedup.queryForObject("SELECT count(*) FROM converge_ticket WHERE consumer_group = ?", Long.class, group))
        .as("tickets").isZero();
  }

  /** Asserts that {@code table} of {@code db} holds exactly one row of each of {@code ids}. */
  public static void assertOnceEach(DataSource db, String table, List<String> ids) {
    JdbcTemplate jdbc = new JdbcTemplate(db);
    for (String id : ids) {
      assertThat(jdbc.queryForObject("SELECT count(*) FROM " + table + " WHERE message_id = ?", Long.class, id))
          .as("effects of " + id).isEqualTo(1);
    }
  }
}
