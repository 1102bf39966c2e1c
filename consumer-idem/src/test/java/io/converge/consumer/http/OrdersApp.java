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

    @Idempotent
    @PostMapping("/annotated/{id}")
    String annotated(@RequestHeader("X-Tenant-Id") String tenant, @RequestHeader("Idempotency-Key") String key) {
      return "run " + count(tenant, key);
    }
  }
}
