package io.converge.examples.order;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.console.trace.Timeline;
import io.converge.console.trace.TimelineEvent;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.Outcome;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.spi.ConsumerBinding;
import io.converge.consumer.spring.TransitionHistory;
import io.converge.examples.ServiceArgs;
import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.PaymentSucceeded;
import io.converge.examples.events.Events.StockRejected;
import io.converge.producer.OutgoingMessage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The order service (Spring Boot, JPA, outbox backend, its own schema on the embedded PostgreSQL) records every
 * state transition of an order in {@code converge_state_transition}, in the transaction of the transition: an
 * order placed with {@code POST /orders} starts with {@code (new) -> CREATED} caused by the request (its
 * Idempotency-Key and tenant); the saga's outcome, delivered through the real {@link IdempotentHandler} of its
 * {@code @IdempotentConsumer} (a test {@link ConsumerBinding} hands the test the handlers instead of a broker),
 * moves it to PAID or CANCELED, caused by the consumer group and the event's message id, once: a redelivery adds
 * nothing. The order's timeline (what {@code converge trace} prints) strings them together; a transition whose
 * transaction rolls back leaves no row.
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class OrderHistoryIT {

  @Test
  void everyTransitionOfAnOrderIsRecordedWithItsCauseInItsTransaction(EmbeddedRocketMQ mq, ConvergePostgres pg)
      throws Exception {
    String run = "history-" + UUID.randomUUID().toString().substring(0, 6);
    PGSimpleDataSource ds = (PGSimpleDataSource) pg.newSchema("order_" + run.replace('-', '_'));
    Map<String, IdempotentHandler> handlers = new ConcurrentHashMap<>();
    ConsumerBinding binding = (topic, handler) -> {
      handlers.put(topic, handler);
      return () -> {
      };
    };
    try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(OrderServiceApp.class)
        .properties("spring.config.name=order")
        .initializers(c -> c.getBeanFactory().registerSingleton("testConsumerBinding", binding))
        .run(ServiceArgs.outbox("order", mq, pg, ds, run))) {
      EventCodec codec = ctx.getBean(EventCodec.class);
      int port = Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));

      String key = UUID.randomUUID().toString();
      String paid = place(port, key);
      // a client whose answer was lost (409 answer-lost) finds its order by its key, in its tenant only
      HttpResponse<String> found = lookUp(port, key, "t-9");
      assertThat(found.statusCode()).as(found.body()).isEqualTo(200);
      assertThat(found.body()).contains("\"orderId\":\"" + paid + "\"");
      assertThat(lookUp(port, key, "t-other").statusCode()).as("another tenant's key").isEqualTo(404);
      assertThat(lookUp(port, "no-such-key", "t-9").statusCode()).isEqualTo(404);
      assertThat(lookUp(port, key, null).statusCode()).as("no tenant").isEqualTo(400);
      String quoted = UUID.randomUUID().toString();
      String placedQuoted = place(port, "\"" + quoted + "\""); // a structured-field string: the same key unquoted
      assertThat(lookUp(port, quoted, "t-9").body()).contains("\"orderId\":\"" + placedQuoted + "\"");
      OutgoingMessage succeeded = codec.message("payment-succeeded-" + run, paid,
          new PaymentSucceeded(paid, "c-1", 500));
      IdempotentHandler onPaid = handlers.get("payment-succeeded-" + run);
      assertThat(onPaid.handle(incoming(succeeded))).isEqualTo(Outcome.PROCESSED);
      assertThat(onPaid.handle(incoming(succeeded))).as("a redelivery").isEqualTo(Outcome.DUPLICATE);

      assertThat(history(ds, paid)).containsExactly(
          "null->CREATED v0 by POST /orders msg " + key + " tenant t-9 final=false",
          "CREATED->PAID v1 by consumer order-on-payment-succeeded msg " + succeeded.id()
              + " tenant default final=true");
      assertThat(version(ds, paid)).as("the order's @Version, as its last history row says").isEqualTo(1);

      String canceled = place(port, UUID.randomUUID().toString());
      OutgoingMessage rejected = codec.message("stock-rejected-" + run, canceled,
          new StockRejected(canceled, "sku-1", 2, "out of stock"));
      assertThat(handlers.get("stock-rejected-" + run).handle(incoming(rejected))).isEqualTo(Outcome.PROCESSED);
      assertThat(history(ds, canceled)).last().asString()
          .isEqualTo("CREATED->CANCELED v1 by consumer order-on-stock-rejected msg " + rejected.id()
              + " tenant default final=true");

      // the timeline of the order (converge trace ORDER_ID): request, creation, payment, in time order
      List<String> timeline = Timeline.of(ds).trace(paid).stream().map(TimelineEvent::what).toList();
      assertThat(timeline).containsSubsequence("request POST /orders claimed", "order (new) -> CREATED (version 0)",
          "order CREATED -> PAID (version 1), final");

      preferWaitAnswersTheOutcomeOrAStatusUrlAndARetryGetsTheFirstAnswer(port, codec, handlers, run);

      // in the transaction of the transition: rolled back with it; refused outside of one
      TransitionHistory history = ctx.getBean(TransitionHistory.class);
      new TransactionTemplate(ctx.getBean(PlatformTransactionManager.class)).executeWithoutResult(status -> {
        history.transition(OrderState.MACHINE, canceled, OrderState.CREATED, OrderState.PAID, 9, null);
        status.setRollbackOnly();
      });
      assertThat(history(ds, canceled)).hasSize(2);
      assertThatThrownBy(() -> history.transition(OrderState.MACHINE, canceled, OrderState.CREATED, OrderState.PAID,
          9, null)).isInstanceOf(IllegalStateException.class).hasMessageContaining("no Spring transaction");
    }
  }

  /**
   * {@code Prefer: wait=N}: an order that does not end within the wait is answered 202 with its status URL, and a
   * retry of its key gets that first answer (replayed), not a wait of its own nor a second order; an order whose
   * outcome arrives during the wait is answered with it (402 payment refused, 409 out of stock, 201 paid) as soon
   * as it arrives, well before the wait ends.
   */
  private static void preferWaitAnswersTheOutcomeOrAStatusUrlAndARetryGetsTheFirstAnswer(int port, EventCodec codec,
      Map<String, IdempotentHandler> handlers, String run) throws Exception {
    String key = UUID.randomUUID().toString();
    HttpResponse<String> open = post(port, key, "wait=1");
    assertThat(open.statusCode()).as(open.body()).isEqualTo(202);
    String id = open.body().replaceAll(".*\"orderId\":\"([^\"]+)\".*", "$1");
    assertThat(open.headers().firstValue("Location")).contains("/orders/" + id);
    assertThat(open.body()).contains("\"state\":\"CREATED\"");
    HttpResponse<String> retry = post(port, key, "wait=1");
    assertThat(retry.statusCode()).as("the first answer, replayed").isEqualTo(202);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).isPresent();
    assertThat(retry.headers().firstValue("Location")).contains("/orders/" + id);
    assertThat(post(port, UUID.randomUUID().toString(), "wait=oops").statusCode()).as("a bad wait is ignored")
        .isEqualTo(201);

    String[] outcomes = {"payment-failed", "stock-rejected", "payment-succeeded"};
    int[] statuses = {402, 409, 201};
    for (int k = 0; k < outcomes.length; k++) {
      String waitingKey = UUID.randomUUID().toString();
      long started = System.nanoTime();
      java.util.concurrent.CompletableFuture<HttpResponse<String>> waiting = java.util.concurrent.CompletableFuture
          .supplyAsync(() -> {
            try {
              return post(port, waitingKey, "wait=10");
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          });
      String waitingId = null;
      while (waitingId == null) {
        HttpResponse<String> found = lookUp(port, waitingKey, "t-9");
        waitingId = found.statusCode() == 200 ? found.body().replaceAll(".*\"orderId\":\"([^\"]+)\".*", "$1")
            : null;
        Thread.sleep(20);
      }
      Object event = switch (k) {
        case 0 -> new io.converge.examples.events.Events.PaymentFailed(waitingId, "c-1", 500, "insufficient funds");
        case 1 -> new StockRejected(waitingId, "sku-1", 2, "insufficient stock");
        default -> new PaymentSucceeded(waitingId, "c-1", 500);
      };
      OutgoingMessage outcome = codec.message(outcomes[k] + "-" + run, waitingId, event);
      assertThat(handlers.get(outcomes[k] + "-" + run).handle(incoming(outcome))).isEqualTo(Outcome.PROCESSED);
      HttpResponse<String> answered = waiting.get(30, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(answered.statusCode()).as(outcomes[k] + ": " + answered.body()).isEqualTo(statuses[k]);
      assertThat(answered.body()).contains("\"orderId\":\"" + waitingId + "\"");
      assertThat(Duration.ofNanos(System.nanoTime() - started)).as("answered on the outcome, not at the wait's end")
          .isLessThan(Duration.ofSeconds(9));
    }
  }

  private static HttpResponse<String> post(int port, String idempotencyKey, String prefer) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/orders")).header("Content-Type", "application/json")
        .header("Idempotency-Key", idempotencyKey).header("X-Tenant-Id", "t-9").header("Prefer", prefer)
        .POST(HttpRequest.BodyPublishers.ofString(
            "{\"customerId\":\"c-1\",\"sku\":\"sku-1\",\"quantity\":2,\"amountCents\":500}"))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String place(int port, String idempotencyKey) throws Exception {
    HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/orders")).header("Content-Type", "application/json")
        .header("Idempotency-Key", idempotencyKey).header("X-Tenant-Id", "t-9")
        .POST(HttpRequest.BodyPublishers.ofString(
            "{\"customerId\":\"c-1\",\"sku\":\"sku-1\",\"quantity\":2,\"amountCents\":500}"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
    return response.body().replaceAll(".*\"orderId\":\"([^\"]+)\".*", "$1");
  }

  /** {@code GET /orders?idempotency-key=KEY} as {@code tenant} (no X-Tenant-Id when null). */
  private static HttpResponse<String> lookUp(int port, String key, String tenant) throws Exception {
    HttpRequest.Builder get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders?idempotency-key="
        + java.net.URLEncoder.encode(key, java.nio.charset.StandardCharsets.UTF_8))).GET();
    if (tenant != null) {
      get.header("X-Tenant-Id", tenant);
    }
    return HttpClient.newHttpClient().send(get.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static IncomingMessage incoming(OutgoingMessage m) {
    return IncomingMessage.builder().topic(m.topic()).headers(m.envelope("account-service", System.currentTimeMillis()))
        .payload(m.payload()).brokerKey(m.key()).brokerMessageId(UUID.randomUUID().toString()).build();
  }

  private static List<String> history(DataSource ds, String orderId) throws Exception {
    List<String> rows = new ArrayList<>();
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("""
        SELECT from_state, to_state, version, cause, message_id, tenant, final FROM converge_state_transition
         WHERE machine = 'order' AND entity_id = ? ORDER BY id""")) {
      ps.setString(1, orderId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(rs.getString(1) + "->" + rs.getString(2) + " v" + rs.getLong(3) + " by " + rs.getString(4) + " msg "
              + rs.getString(5) + " tenant " + rs.getString(6) + " final=" + rs.getBoolean(7));
        }
      }
    }
    return rows;
  }

  private static long version(DataSource ds, String orderId) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT version FROM orders WHERE id = ?")) {
      ps.setString(1, orderId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
