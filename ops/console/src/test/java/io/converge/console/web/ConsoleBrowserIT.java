package io.converge.console.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.console.inspect.StuckKind;
import io.converge.console.inspect.StuckThresholds;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.spi.HeldReleaser;
import io.converge.outbox.OutboxBackend;
import io.converge.outbox.OutboxRelay;
import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import io.converge.core.InvalidMessageException;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;

/**
 * The console in a real browser (headless Chromium, Selenium) against the embedded PostgreSQL, with a real
 * outbox relay and a real idempotent consumer producing the stuck items: a key the broker side refuses is
 * parked by the relay, found in the console, resumed through its confirmation page, then sent by the relay
 * once the cause is fixed: gone from the list and audited. A dead letter parked by the consumer after its
 * attempts is re-driven from the console and run by its own handler (the consumer's release schedule picks
 * the mark up): gone and audited. A message key with HTML in it is shown as text. With
 * {@code -Dconsole.screenshot=PATH} the overview is saved there (docs/console.png).
 */
class ConsoleBrowserIT {

  private static DataSource ds;
  private static ConsoleHttpServer server;
  private static ChromeDriver browser;
  /** The sink's refusal of the poison key: the cause a person fixes before resuming. */
  private static final AtomicBoolean REFUSE = new AtomicBoolean(true);
  private static final Set<String> SENT = ConcurrentHashMap.newKeySet();
  /** The handler's failure: the cause a person fixes before re-driving. */
  private static final AtomicBoolean LEDGER_DOWN = new AtomicBoolean(true);

  @BeforeAll
  static void start() throws Exception {
    // the browser starts (10-15 s on a loaded machine) while the database does; no browser fails here
    CompletableFuture<ChromeDriver> starting = CompletableFuture.supplyAsync(Browser::start);
    ds = ConvergePostgres.shared().newSchema("consolebrowser");
    for (String module : List.of("producer", "outbox", "consumer")) {
      Migrations.apply(ds, module);
    }
    try {
      browser = starting.get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Error error ? error : new AssertionError("The browser did not start", e.getCause());
    }
    // every item is stuck at once (threshold zero): the pages mark them as an operator sees them after minutes
    Console console = Console.builder().dataSource(ds).discoverPages(false)
        .thresholds(StuckThresholds.defaults().withAll(Duration.ZERO)).build();
    server = ConsoleHttpServer.start(console, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), "alice");
  }

  @AfterAll
  static void stop() {
    if (browser != null) {
      browser.quit();
    }
    if (server != null) {
      server.close();
    }
  }

  /** A sink that refuses the poison key's messages while the cause lasts (a broker refusal: too large, no topic). */
  private static final class RefusingSink implements OutboxSink {

    @Override
    public String name() {
      return "refusing";
    }

    @Override
    public void send(OutboxRecord record) {
      if (record.orderKey().startsWith("poison") && REFUSE.get()) {
        throw new InvalidMessageException("topic orders refuses the message (message too large)",
            record.messageId(), null);
      }
      SENT.add(record.messageId());
    }

    @Override
    public void close() {
    }
  }

  @Test
  void aParkedKeyIsResumedWithConfirmationThenSentAndAudited() throws Exception {
    String poison;
    String healthy;
    try (TxnProducer producer = TxnProducer.builder().group("console-it").dataSource(ds)
        .backend(OutboxBackend.outbox()).topics("orders").build()) {
      poison = producer.inTransaction(tx -> tx.publish(OutgoingMessage.builder("orders").key("poison-7")
          .payload("{\"order\":7}".getBytes(StandardCharsets.UTF_8)).build()));
      healthy = producer.inTransaction(tx -> tx.publish(OutgoingMessage.builder("orders").key("healthy-1")
          .payload("{}".getBytes(StandardCharsets.UTF_8)).build()));
    }
    try (OutboxRelay relay = OutboxRelay.builder().dataSource(ds).sink(new RefusingSink()).maxAttempts(2)
        .retryBase(Duration.ofMillis(50)).idlePoll(Duration.ofMillis(10), Duration.ofMillis(100)).build()) {
      relay.start();
      await().atMost(Duration.ofSeconds(20)).until(() -> count("SELECT count(*) FROM converge_outbox"
          + " WHERE parked_at IS NOT NULL") == 1 && SENT.contains(healthy));

      WebDriver b = browser;
      b.get(server.url());
      WebElement parkedRow = shown(b, By.cssSelector("#overview tr[data-kind='outbox-parked']"));
      assertThat(parkedRow.getText()).contains("Outbox parked keys").contains("1");
      parkedRow.findElement(By.linkText("Outbox parked keys")).click();
      WebElement row = shown(b, By.cssSelector("#items tr[data-key='poison-7']"));
      assertThat(row.getText()).contains(poison).contains("parked after 2 attempt(s)").contains("message too large");

      REFUSE.set(false); // the cause is fixed, then the person resumes the key
      row.findElement(By.cssSelector("a[data-action='resume-outbox-key']")).click();
      assertThat(shown(b, By.id("target")).getText()).as("the parked row, which names its key's line")
          .isEqualTo(poison);
      assertThat(count("SELECT count(*) FROM converge_outbox WHERE parked_at IS NOT NULL"))
          .as("the confirmation page changed nothing").isOne();
      shown(b, By.name("note")).sendKeys("topic limit raised");
      shown(b, By.id("confirm")).click();
      assertThat(shown(b, By.id("result")).getText())
          .contains("Resume the parked key of message " + poison + ": recorded");

      await().atMost(Duration.ofSeconds(20)).until(() -> SENT.contains(poison));
      assertThat(count("SELECT count(*) FROM converge_outbox WHERE published_at IS NULL")).isZero();
      b.get(server.url() + "kind/outbox-parked");
      assertThat(b.findElements(By.cssSelector("#items tr[data-key='poison-7']"))).as("gone").isEmpty();
      b.get(server.url() + "audit");
      assertThat(shown(b, By.id("audit")).getText()).contains("alice").contains("Resume the parked key")
          .contains(poison).contains("done").contains("topic limit raised");
    }
  }

  @Test
  void aDeadLetterIsReDrivenWithConfirmationAndRunByItsHandler() throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE charge (message_id text PRIMARY KEY, amount int NOT NULL)");
    }
    IdempotentHandler handler = IdempotentHandler.builder().group("billing").dataSource(ds)
        .policy(FailurePolicy.defaults().withMaxAttempts(2).withBackoff(Duration.ofMillis(5), Duration.ofMillis(10)))
        .handler((c, m) -> {
          if (LEDGER_DOWN.get()) {
            throw new IllegalStateException("ledger rejected the charge: account locked");
          }
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO charge VALUES (?, 42)")) {
            ps.setString(1, m.header("converge-message-id"));
            ps.executeUpdate();
          }
        }).build();
    String key = "<b id=\"injected\">cust-1</b>";
    Outcome outcome = handler
        .handle(IncomingMessage.builder().topic("charges").header("converge-message-id", "charge-1")
            .brokerKey(key).payload("{\"amount\":42}").build());
    assertThat(outcome).isEqualTo(Outcome.DEAD_LETTERED);
    long dlqId = count("SELECT id FROM converge_dlq WHERE message_id = 'charge-1'");

    // the running consumer
    try (HeldReleaser consumer = HeldReleaser.start(handler, List.of("charges"), Duration.ofMillis(200))) {
      WebDriver b = browser;
      b.get(server.url() + "kind/" + StuckKind.CONSUMER_DLQ.slug());
      WebElement row = shown(b, By.cssSelector("#items tr[data-id='" + dlqId + "']"));
      assertThat(row.getText()).contains(key).contains("ledger rejected the charge").contains("attempts: 2");
      assertThat(b.findElements(By.id("injected"))).as("a key is text, never HTML").isEmpty();
      assertThat(row.getText()).contains("stuck");
      screenshot();
      b.get(server.url() + "kind/" + StuckKind.CONSUMER_DLQ.slug());
      row = shown(b, By.cssSelector("#items tr[data-id='" + dlqId + "']"));

      LEDGER_DOWN.set(false);
      row.findElement(By.cssSelector("a[data-action='redrive-dead-letter']")).click();
      shown(b, By.id("confirm")).click();
      assertThat(shown(b, By.id("result")).getText()).contains("Re-drive the dead letter " + dlqId + ": recorded");

      await().atMost(Duration.ofSeconds(10))
          .until(() -> count("SELECT count(*) FROM charge WHERE message_id = 'charge-1'") == 1);
      assertThat(count("SELECT count(*) FROM converge_dlq WHERE id = " + dlqId + " AND status = 'RESUMED'")).isOne();
      b.get(server.url() + "kind/" + StuckKind.CONSUMER_DLQ.slug());
      assertThat(b.findElements(By.cssSelector("#items tr[data-id='" + dlqId + "']"))).as("gone").isEmpty();
      b.get(server.url() + "audit");
      assertThat(shown(b, By.id("audit")).getText()).contains("Re-drive the dead letter").contains("alice")
          .contains(Long.toString(dlqId));
      assertThat(count("SELECT count(*) FROM converge_console_audit WHERE action = 'REDRIVE_DEAD_LETTER'"
          + " AND target = '" + dlqId + "' AND operator = 'alice' AND outcome = 'DONE'")).isOne();
    }
  }

  @Test
  void aGetNeverActsAndAConfirmationActsOnce() throws Exception {
    WebDriver b = browser;
    b.get(server.url() + "act?action=discard-dead-letter&target=1");
    assertThat(shown(b, By.id("error")).getText()).contains("a GET never changes anything");
    b.get(server.url() + "confirm?action=discard-dead-letter&target=999999");
    String token = shown(b, By.name("token")).getAttribute("value");
    String form = "action=discard-dead-letter&target=999999&token=" + token;
    HttpClient http = HttpClient.newHttpClient();
    HttpRequest post = HttpRequest.newBuilder(URI.create(server.url() + "act"))
        .header("Content-Type", "application/x-www-form-urlencoded").POST(BodyPublishers.ofString(form)).build();
    HttpResponse<String> first = http.send(post, BodyHandlers.ofString());
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).contains("not applicable");
    HttpResponse<String> again = http.send(post, BodyHandlers.ofString());
    assertThat(again.statusCode()).as("the token is spent").isEqualTo(403);
    HttpResponse<String> forged = http.send(HttpRequest.newBuilder(URI.create(server.url() + "act"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(BodyPublishers.ofString("action=discard-dead-letter&target=999999&token=guessed")).build(),
        BodyHandlers.ofString());
    assertThat(forged.statusCode()).isEqualTo(403);
    assertThat(count("SELECT count(*) FROM converge_console_audit WHERE target = '999999'")).as("acted once").isOne();
  }

  private static void screenshot() throws Exception {
    String target = System.getProperty("console.screenshot");
    browser.get(server.url());
    byte[] png = browser.getScreenshotAs(OutputType.BYTES);
    Path out = target != null ? Path.of(target) : Path.of("target", "console.png");
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.write(out, png);
  }

  private static long count(String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * The element {@code by} once the page shows it: a click that submits a form or follows a link returns
   * before the next page is loaded on a busy machine. Fails with the page the browser shows.
   */
  private static WebElement shown(WebDriver b, By by) {
    try {
      await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
          .until(() -> !b.findElements(by).isEmpty());
    } catch (ConditionTimeoutException e) {
      throw new AssertionError("No " + by + " within 20 s on " + b.getCurrentUrl() + ", which shows:\n"
          + b.getPageSource(), e);
    }
    return b.findElement(by);
  }
}
