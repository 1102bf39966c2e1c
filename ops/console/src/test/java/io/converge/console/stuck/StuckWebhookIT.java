package io.converge.console.stuck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.console.inspect.Inspector;
import io.converge.console.inspect.StuckItem;
import io.converge.console.inspect.StuckKind;
import io.converge.console.inspect.StuckThresholds;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two {@link StuckWebhook} instances sharing the embedded PostgreSQL post each newly stuck item once (and
 * each failed POST's retry once), leasing one row per POST; and a webhook that hangs does not stop the
 * gauges' refresh, since the POSTs run on the webhook's own thread.
 */
class StuckWebhookIT {

  private static final Pattern ID = Pattern.compile("\"id\":\"([^\"]+)\"");

  private WebhookBed bed;
  private final Map<String, List<String>> postsById = new ConcurrentHashMap<>(); // id -> "a 500", "b 200", ...
  private final List<String> instances = new CopyOnWriteArrayList<>();
  private final CountDownLatch hanging = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);

  @BeforeEach
  void setUp() throws Exception {
    bed = new WebhookBed("webhook");
    for (String instance : List.of("a", "b")) {
      bed.on("/" + instance, exchange -> {
        Matcher m = ID.matcher(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
        String id = m.find() ? m.group(1) : "?";
        List<String> posts = postsById.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>());
        int status;
        synchronized (posts) {
          status = posts.isEmpty() ? 500 : 200; // each item's first POST fails: its retry is leased too
          posts.add(instance + " " + status);
        }
        instances.add(instance);
        sleep(10); // a POST takes a while: the other instance runs meanwhile
        exchange.sendResponseHeaders(status, -1);
        exchange.close();
      });
    }
    bed.on("/hang", exchange -> {
      hanging.countDown();
      try {
        release.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
  }

  @AfterEach
  void tearDown() {
    release.countDown();
    bed.close();
  }

  @Test
  void twoInstancesPostEachNewlyStuckItemOnceAndEachRetryOnce() throws Exception {
    List<StuckItem> items = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      items.add(new StuckItem(StuckKind.CONSUMER_DLQ, "dlq-" + i, null, null, "payments", Instant.now(),
          Duration.ofMinutes(2), "RETRIES_EXHAUSTED", Map.of()));
    }
    try (StuckWebhook a = webhook("a"); StuckWebhook b = webhook("b")) {
      Thread other = new Thread(() -> b.notifyNew(items));
      other.start();
      a.notifyNew(items);
      other.join();
      // the refreshes of both instances: each has its thread post what is due
      await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50)).until(() -> {
        a.notifyNew(List.of());
        b.notifyNew(List.of());
        // the server records a POST before answering it: wait for the marks too, or close() interrupts the last
        return postsById.values().stream().filter(p -> p.stream().anyMatch(s -> s.endsWith(" 200"))).count() == 20
            && countDelivered() == 20;
      });
    }
    assertThat(postsById).hasSize(20);
    assertThat(postsById.values()).as("per item: one failed POST, then one retry that succeeded")
        .allSatisfy(posts -> assertThat(posts).hasSize(2).satisfiesExactly(
            first -> assertThat(first).endsWith(" 500"), second -> assertThat(second).endsWith(" 200")));
    assertThat(instances).as("both instances posted").contains("a", "b");
    assertThat(countDelivered()).isEqualTo(20);
  }

  @Test
  void aHangingWebhookDoesNotStopTheRefresh() throws Exception {
    try (Connection c = bed.ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("INSERT INTO converge_stuck_notified (kind, item_id, payload, next_attempt_at)"
          + " VALUES ('ticket', '7', '{\"id\":\"7\"}', now())");
    }
    StuckWebhook webhook = bed.webhook("/hang").timeout(Duration.ofSeconds(8)).build();
    try (StuckGauges gauges = StuckGauges.builder().inspector(Inspector.of(bed.ds, StuckThresholds.defaults()))
        .registry(new SimpleMeterRegistry()).refreshInterval(Duration.ofMillis(20)).webhook(webhook).build()
        .start()) {
      assertThat(hanging.await(5, TimeUnit.SECONDS)).as("the POST started").isTrue();
      long seen = gauges.refreshes();
      await().atMost(Duration.ofSeconds(3)).until(() -> gauges.refreshes() >= seen + 5);
      assertThat(release.getCount()).as("the POST still hangs").isOne();
      release.countDown();
      await().atMost(Duration.ofSeconds(5)).until(() -> countDelivered() == 1);
    }
  }

  private long countDelivered() throws Exception {
    try (Connection c = bed.ds.getConnection();
        Statement s = c.createStatement();
        var rs = s.executeQuery("SELECT count(*) FROM converge_stuck_notified WHERE delivered_at IS NOT NULL")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private StuckWebhook webhook(String instance) {
    return bed.webhook("/" + instance).timeout(Duration.ofSeconds(2))
        .retry(Duration.ofMillis(20), Duration.ofMillis(40)).build();
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis); // the webhook's latency, not a synchronisation
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
