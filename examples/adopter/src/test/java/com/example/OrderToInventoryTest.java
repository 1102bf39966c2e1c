package com.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.example.inventory.InventoryServiceApplication;
import com.example.orders.OrderService;
import com.example.orders.OrderServiceApplication;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.core.Envelope;
import io.converge.producer.spring.TransactionalPublisher;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The two services of docs/getting-started.md, each a Spring Boot application with its own schema, on
 * real embedded PostgreSQL and RocketMQ: an order committed is reserved once, an order rolled back is
 * never published, a duplicate copy of the message changes nothing, and a retried POST with the same
 * Idempotency-Key places one order. Only the properties of the guide are set, with the servers' addresses.
 */
@ExtendWith(RocketMQExtension.class)
class OrderToInventoryTest {

  private static ConfigurableApplicationContext orders;
  private static ConfigurableApplicationContext inventory;
  private static String nameServer;

  @BeforeAll
  static void start(EmbeddedRocketMQ mq) throws Exception {
    mq.createTopic("order-created");
    nameServer = mq.nameServerAddress();
    ConvergePostgres pg = ConvergePostgres.shared();
    try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA IF NOT EXISTS orders");
      s.execute("CREATE SCHEMA IF NOT EXISTS inventory");
    }
    orders = new SpringApplicationBuilder(OrderServiceApplication.class)
        .properties("spring.config.name=orders", "server.port=0").run(args(pg, "orders"));
    inventory = new SpringApplicationBuilder(InventoryServiceApplication.class)
        .properties("spring.config.name=inventory", "server.port=0").run(args(pg, "inventory"));
  }

  private static String[] args(ConvergePostgres pg, String schema) {
    String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "currentSchema=" + schema;
    return new String[] {"--spring.datasource.url=" + url, "--spring.datasource.username=" + pg.user(),
        "--spring.datasource.password=" + pg.password(), "--converge.rocketmq.name-server=" + nameServer};
  }

  @AfterAll
  static void stop() {
    if (inventory != null) {
      inventory.close();
    }
    if (orders != null) {
      orders.close();
    }
  }

  @Test
  void anOrderIsReservedOnceAndARolledBackOneNever() throws Exception {
    assertThat(orders.getBean(TransactionalPublisher.class)).isNotNull();
    OrderService service = orders.getBean(OrderService.class);
    assertThatThrownBy(() -> service.place("sku-void", 0)).isInstanceOf(IllegalArgumentException.class);
    String placed = service.place("sku-1", 2);

    await().atMost(Duration.ofSeconds(60)).until(() -> reservations(placed) == 1);
    assertThat(orderCount(placed)).isEqualTo(1);

    // a second copy of the same message, as a broker redelivery would bring it: it must not reserve again
    Map<String, Object> first = inventoryJdbc().queryForMap(
        "SELECT message_id, order_json::text AS order_json FROM reservation WHERE order_id = ?", placed);
    DefaultMQProducer raw = new DefaultMQProducer("adopter-duplicate");
    raw.setNamesrvAddr(nameServer);
    raw.start();
    try {
      Message copy = new Message("order-created", "", placed,
          ((String) first.get("order_json")).getBytes(StandardCharsets.UTF_8));
      copy.putUserProperty(Envelope.MESSAGE_ID, (String) first.get("message_id"));
      copy.putUserProperty(Envelope.KEY, placed);
      assertThat(raw.send(copy).getSendStatus()).isEqualTo(SendStatus.SEND_OK);
    } finally {
      raw.shutdown();
    }
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> reservations(placed) == 1);
    // the rolled-back order: never in the orders table, never reserved
    assertThat(inventoryJdbc().queryForObject("SELECT count(*) FROM reservation WHERE order_json->>'sku' = 'sku-void'",
        Integer.class)).isZero();
  }

  @Test
  void aRetriedPostWithTheSameIdempotencyKeyPlacesOneOrder() throws Exception {
    int port = ((WebServerApplicationContext) orders).getWebServer().getPort();
    HttpClient http = HttpClient.newHttpClient();
    HttpRequest post = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
        .header("Content-Type", "application/json").header("Idempotency-Key", "order-7f3a")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"sku-2\",\"quantity\":1}")).build();
    HttpResponse<String> first = http.send(post, HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> retry = http.send(post, HttpResponse.BodyHandlers.ofString());

    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(ordersJdbc().queryForObject("SELECT count(*) FROM orders WHERE sku = 'sku-2'", Integer.class))
        .isEqualTo(1);
    String id = first.body().replaceAll(".*\"orderId\":\"([^\"]+)\".*", "$1");
    await().atMost(Duration.ofSeconds(60)).until(() -> reservations(id) == 1);
  }

  private static int reservations(String orderId) {
    return inventoryJdbc().queryForObject("SELECT count(*) FROM reservation WHERE order_id = ?", Integer.class,
        orderId);
  }

  private static int orderCount(String orderId) {
    return ordersJdbc().queryForObject("SELECT count(*) FROM orders WHERE id = ?", Integer.class, orderId);
  }

  private static JdbcTemplate ordersJdbc() {
    return orders.getBean(JdbcTemplate.class);
  }

  private static JdbcTemplate inventoryJdbc() {
    return inventory.getBean(JdbcTemplate.class);
  }
}
