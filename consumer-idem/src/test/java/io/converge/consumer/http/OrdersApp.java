package io.converge.consumer.http;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/** A Spring Boot service whose handlers count how often they really run. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(OrdersApp.Orders.class)
class OrdersApp {

  /** The data source the app uses: set by the test before the app starts. */
  static volatile DataSource dataSource;
  /** A pool of one connection the test exhausts, so that a handler's transaction times out waiting for it. */
  static volatile DataSource tinyPool;

  @Bean
  DataSource dataSource() {
    return dataSource;
  }

  @Bean
  MeterRegistry meterRegistry() {
    return new SimpleMeterRegistry();
  }

  @RestController
  static class Orders {
    /** Executions per tenant/key, and a global run number that makes every execution's body unique. */
    final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    final AtomicInteger runNumber = new AtomicInteger();

    int runs(String tenant, String key) {
      AtomicInteger n = runs.get(tenant + "/" + key);
      return n == null ? 0 : n.get();
    }

    private int count(String tenant, String key) {
      runs.computeIfAbsent(tenant + "/" + key, k -> new AtomicInteger()).incrementAndGet();
      return runNumber.incrementAndGet();
    }

    @PostMapping(path = "/orders", consumes = "application/json", produces = "application/json")
    ResponseEntity<String> create(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader(name = "Idempotency-Key", required = false) String key, @RequestBody String body)
        throws InterruptedException {
      int run = count(tenant, key);
      if (body.contains("\"sleep\"")) {
        Thread.sleep(400);
      }
      return ResponseEntity.created(URI.create("/orders/" + run)).header("X-Run", Integer.toString(run))
          .body("{\"tenant\":\"" + tenant + "\",\"run\":" + run + "}");
    }

    @PostMapping("/charges/unavailable")
    ResponseEntity<String> unavailable(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      int run = count(tenant, key);
      return ResponseEntity.status(503).header("Retry-After", "7").header("Content-Type", "application/json")
          .body("{\"error\":\"acquirer down\",\"run\":" + run + "}");
    }

    @PostMapping("/charges/boom")
    String boom(@RequestHeader("X-Tenant-Id") String tenant, @RequestHeader("Idempotency-Key") String key) {
      count(tenant, key);
      throw new IllegalStateException("the handler broke");
    }

    @PostMapping("/optional")
    String optional(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader(name = "Idempotency-Key", required = false) String key) {
      return "run " + count(tenant, key);
    }

    @PostMapping("/charges/async")
    java.util.concurrent.Callable<String> async(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      return () -> "run " + count(tenant, key);
    }

    /** Runs a Spring transaction on {@link #tinyPool}: when the pool is exhausted it fails with Hikari's timeout. */
    @PostMapping("/charges/pooled")
    ResponseEntity<String> pooled(@RequestHeader("X-Tenant-Id") String tenant, @RequestHeader("Idempotency-Key") String key) {
      int run = count(tenant, key);
      Integer one = new org.springframework.transaction.support.TransactionTemplate(
          new org.springframework.jdbc.support.JdbcTransactionManager(tinyPool))
          .execute(s -> new org.springframework.jdbc.core.JdbcTemplate(tinyPool).queryForObject("SELECT 1", Integer.class));
      return ResponseEntity.status(201).body("{\"run\":" + run + ",\"one\":" + one + "}");
    }

    /** Fails with an outage on its first run, which {@link #databaseDown} renders as a 500 of the application's. */
    @PostMapping("/charges/rendered")
    ResponseEntity<String> rendered(@RequestHeader("X-Tenant-Id") String tenant, @RequestHeader("Idempotency-Key") String key) {
      int run = count(tenant, key);
      if (runs(tenant, key) == 1) {
        throw new io.converge.producer.DatabaseUnavailableException("the ledger database is down", null, null);
      }
      return ResponseEntity.status(201).body("{\"run\":" + run + "}");
    }

    /** A 500 the application answers on purpose: stored and replayed. */
    @PostMapping("/charges/refused")
    ResponseEntity<String> refused(@RequestHeader("X-Tenant-Id") String tenant, @RequestHeader("Idempotency-Key") String key) {
      return ResponseEntity.status(500).body("{\"run\":" + count(tenant, key) + ",\"error\":\"acquirer said no\"}");
    }

    @org.springframework.web.bind.annotation.ExceptionHandler(io.converge.producer.DatabaseUnavailableException.class)
    ResponseEntity<String> databaseDown(io.converge.producer.DatabaseUnavailableException e) {
      return ResponseEntity.status(500).body("{\"error\":\"database down\"}");
    }

    @Idempotent
    @PostMapping("/annotated/{id}")
    String annotated(@RequestHeader("X-Tenant-Id") String tenant, @RequestHeader("Idempotency-Key") String key) {
      return "run " + count(tenant, key);
    }
  }
}
