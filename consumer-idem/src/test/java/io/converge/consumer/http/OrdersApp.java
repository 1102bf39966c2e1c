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
  /** A TxnProducer on {@link #dataSource}: set by the test before the app starts. */
  static volatile io.converge.producer.TxnProducer producer;
  static volatile String producerTopic;
  /** A pool of one connection the test exhausts, so that a handler's transaction times out waiting for it. */
  static volatile DataSource tinyPool;

  @Bean
  DataSource dataSource() {
    return dataSource;
  }

  /** The application's transaction manager, as Spring Boot's JDBC auto-configuration would declare it. */
  @Bean
  org.springframework.transaction.PlatformTransactionManager transactionManager() {
    return new org.springframework.jdbc.support.JdbcTransactionManager(dataSource);
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
        Thread.sleep(400); // a slow handler is what the test exercises, not a wait
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
    ResponseEntity<String> pooled(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      int run = count(tenant, key);
      Integer one = new org.springframework.transaction.support.TransactionTemplate(
          new org.springframework.jdbc.support.JdbcTransactionManager(tinyPool))
          .execute(
              s -> new org.springframework.jdbc.core.JdbcTemplate(tinyPool).queryForObject("SELECT 1", Integer.class));
      return ResponseEntity.status(201).body("{\"run\":" + run + ",\"one\":" + one + "}");
    }

    /**
     * Charges (a Spring transaction on the application's manager, committed), then fails on a real outage: a
     * transaction on {@link #tinyPool}, which the test exhausts, times out waiting for a connection.
     */
    @PostMapping("/charges/charged-then-down")
    ResponseEntity<String> chargedThenDown(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      int run = count(tenant, key);
      new org.springframework.transaction.support.TransactionTemplate(transactions)
          .executeWithoutResult(s -> new org.springframework.jdbc.core.JdbcTemplate(dataSource)
              .update("INSERT INTO cut_charge(idem_key, run) VALUES (?, ?)", key, run));
      new org.springframework.transaction.support.TransactionTemplate(
          new org.springframework.jdbc.support.JdbcTransactionManager(tinyPool))
          .execute(
              s -> new org.springframework.jdbc.core.JdbcTemplate(tinyPool).queryForObject("SELECT 1", Integer.class));
      return ResponseEntity.status(201).body("{\"run\":" + run + "}");
    }

    /** Fails with an outage on its first run, which {@link #databaseDown} renders as a 500 of the application's. */
    @PostMapping("/charges/rendered")
    ResponseEntity<String> rendered(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      int run = count(tenant, key);
      if (runs(tenant, key) == 1) {
        throw new io.converge.core.DatabaseUnavailableException("the ledger database is down", null, null);
      }
      return ResponseEntity.status(201).body("{\"run\":" + run + "}");
    }

    @org.springframework.beans.factory.annotation.Autowired
    org.springframework.transaction.PlatformTransactionManager transactions;

    /** The backend {@link #transactions}' next commit on this thread terminates right before its COMMIT. */
    private static final ThreadLocal<Integer> KILL_AT_COMMIT = new ThreadLocal<>();

    /**
     * Listens to the application's transaction manager after Converge's listener (added when the bean was
     * initialised): a commit of {@link #KILL_AT_COMMIT} meets a dead connection after the marker was written.
     */
    @jakarta.annotation.PostConstruct
    void killAtCommit() {
      ((org.springframework.transaction.ConfigurableTransactionManager) transactions)
          .addListener(new org.springframework.transaction.TransactionExecutionListener() {

            @Override
            public void beforeCommit(org.springframework.transaction.TransactionExecution transaction) {
              Integer pid = KILL_AT_COMMIT.get();
              if (pid != null) {
                KILL_AT_COMMIT.remove();
                terminate(pid);
              }
            }
          });
    }

    /**
     * Writes a charge in a Spring transaction whose COMMIT fails with an unknown outcome: right before the commit,
     * another connection terminates the transaction's backend, so COMMIT meets a dead connection (the filter cannot
     * tell whether the charge was committed).
     */
    @PostMapping("/charges/cut-bean")
    ResponseEntity<String> cutBean(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      // the application's bean, Spring Boot's JdbcTransactionManager: the failed commit surfaces as a
      // DataAccessException (replaced by the failed rollback's) that looks like an ordinary outage
      return cut(tenant, key, transactions);
    }

    /**
     * Writes the same charge twice in a Spring transaction of the application's manager; the deferred unique
     * constraint fails the COMMIT itself (SQLState 23505): the database refused the work, nothing committed.
     */
    @PostMapping("/charges/refused-at-commit")
    ResponseEntity<String> refusedAtCommit(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      count(tenant, key);
      new org.springframework.transaction.support.TransactionTemplate(transactions).executeWithoutResult(s -> {
        org.springframework.jdbc.core.JdbcTemplate tx = new org.springframework.jdbc.core.JdbcTemplate(dataSource);
        tx.update("INSERT INTO cut_deferred(idem_key) VALUES (?)", key);
        tx.update("INSERT INTO cut_deferred(idem_key) VALUES (?)", key);
      });
      return ResponseEntity.status(201).body("{}");
    }

    /** The same with a DataSourceTransactionManager that is no bean: the failure is a TransactionSystemException. */
    @PostMapping("/charges/cut-plain")
    ResponseEntity<String> cutPlain(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      return cut(tenant, key, new org.springframework.jdbc.datasource.DataSourceTransactionManager(dataSource));
    }

    private ResponseEntity<String> cut(String tenant, String key,
        org.springframework.transaction.PlatformTransactionManager tm) {
      int run = count(tenant, key);
      boolean first = runs(tenant, key) == 1; // later runs commit
      new org.springframework.transaction.support.TransactionTemplate(tm).executeWithoutResult(s -> {
        org.springframework.jdbc.core.JdbcTemplate tx = new org.springframework.jdbc.core.JdbcTemplate(dataSource);
        tx.update("INSERT INTO cut_charge(idem_key, run) VALUES (?, ?)", key, run);
        if (!first) {
          return;
        }
        int pid = tx.queryForObject("SELECT pg_backend_pid()", Integer.class);
        if (tm == transactions) {
          // at COMMIT itself, after Converge's listener wrote its marker in the transaction
          KILL_AT_COMMIT.set(pid);
          return;
        }
        org.springframework.transaction.support.TransactionSynchronizationManager.registerSynchronization(
            new org.springframework.transaction.support.TransactionSynchronization() {

              @Override
              public void beforeCommit(boolean readOnly) {
                terminate(pid);
              }
            });
      });
      return ResponseEntity.status(201).body("{\"run\":" + run + "}");
    }

    /** Charges in a Spring transaction on the application's manager, committed, and answers 201. */
    @PostMapping("/charges/committed")
    ResponseEntity<String> committed(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      return chargeInTransaction(tenant, key, transactions, (jdbc, first) -> {
      });
    }

    /** Charges in a unit of work of {@link #producer} (TxnProducer on the outbox backend), committed: 201. */
    @PostMapping("/charges/txn")
    ResponseEntity<String> txn(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      int run = count(tenant, key);
      producer.inTransaction(tx -> {
        tx.publish(io.converge.producer.OutgoingMessage.builder(producerTopic).key(key)
            .payload(key.getBytes(java.nio.charset.StandardCharsets.UTF_8)).build());
        try (java.sql.PreparedStatement ps = tx.connection()
            .prepareStatement("INSERT INTO cut_charge(idem_key, run) VALUES (?, ?)")) {
          ps.setString(1, key);
          ps.setInt(2, run);
          return ps.executeUpdate();
        }
      });
      return ResponseEntity.status(201).body("{\"run\":" + run + "}");
    }

    /**
     * Charges in a unit of work of {@link #producer} on the filter's data source. On its first run the unit's COMMIT
     * meets a dead connection (its backend is terminated right after the claim's marker was written): the unit fails
     * with {@code CommitOutcomeUnknownException}. As the README advises, the handler does not run the unit again but
     * looks the charge up, on {@link #tinyPool}, which the test exhausts: the lookup fails with a pool timeout, and the
     * exception the filter finally sees holds no trace of the unknown outcome. Later runs charge (201).
     */
    @PostMapping("/charges/txn-cut")
    ResponseEntity<String> txnCut(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      int run = count(tenant, key);
      io.converge.core.internal.Commits.BeforeCommit marker = io.converge.core.internal.Commits.beforeCommit(null);
      if (runs(tenant, key) == 1) {
        io.converge.core.internal.Commits.beforeCommit((ds, c) -> {
          marker.run(ds, c);
          try (java.sql.Statement st = c.createStatement();
              java.sql.ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            terminate(rs.getInt(1));
          }
        });
      } else {
        io.converge.core.internal.Commits.beforeCommit(marker);
      }
      try {
        producer.inTransaction(tx -> {
          try (java.sql.PreparedStatement ps = tx.connection()
              .prepareStatement("INSERT INTO cut_charge(idem_key, run) VALUES (?, ?)")) {
            ps.setString(1, key);
            ps.setInt(2, run);
            return ps.executeUpdate();
          }
        });
      } catch (io.converge.core.CommitOutcomeUnknownException e) {
        Long charged = new org.springframework.jdbc.core.JdbcTemplate(tinyPool)
            .queryForObject("SELECT count(*) FROM cut_charge WHERE idem_key = ?", Long.class, key);
        return ResponseEntity.status(charged > 0 ? 201 : 500).body("{\"run\":" + run + "}");
      } finally {
        io.converge.core.internal.Commits.beforeCommit(marker);
      }
      return ResponseEntity.status(201).body("{\"run\":" + run + "}");
    }

    /** Charges, then refuses on its first run: the transaction rolls back (500); a later run charges (201). */
    @PostMapping("/charges/rolled-back")
    ResponseEntity<String> rolledBack(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      return chargeInTransaction(tenant, key, transactions, (jdbc, first) -> {
        if (first) {
          throw new IllegalStateException("the acquirer refused after the charge row was written");
        }
      });
    }

    /** After the charge row of a run: what the endpoint does next, on the transaction's {@code jdbc}. */
    private interface AfterCharge {

      void run(org.springframework.jdbc.core.JdbcTemplate jdbc, boolean firstRun);
    }

    /** Charges in a transaction of {@code manager}, then runs {@code then} in it; 201 with the run's number. */
    private ResponseEntity<String> chargeInTransaction(String tenant, String key,
        org.springframework.transaction.PlatformTransactionManager manager, AfterCharge then) {
      int run = count(tenant, key);
      boolean first = runs(tenant, key) == 1;
      new org.springframework.transaction.support.TransactionTemplate(manager).executeWithoutResult(s -> {
        org.springframework.jdbc.core.JdbcTemplate jdbc = new org.springframework.jdbc.core.JdbcTemplate(dataSource);
        jdbc.update("INSERT INTO cut_charge(idem_key, run) VALUES (?, ?)", key, run);
        then.run(jdbc, first);
      });
      return ResponseEntity.status(201).body("{\"run\":" + run + "}");
    }

    /**
     * On its first run the database connection dies in the middle of the transaction (its backend is terminated, as
     * a crash-restart of PostgreSQL does), so the next statement fails and the rollback fails on the dead connection
     * (a DataSourceTransactionManager's TransactionSystemException): no commit was attempted. Later runs charge.
     */
    @PostMapping("/charges/crash-plain")
    ResponseEntity<String> crashPlain(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      return chargeInTransaction(tenant, key,
          new org.springframework.jdbc.datasource.DataSourceTransactionManager(dataSource), (jdbc, first) -> {
            if (first) {
              terminate(jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class));
              jdbc.queryForObject("SELECT 1", Integer.class); // fails: the connection is dead
            }
          });
    }

    /**
     * The same under JPA as the examples run it (Hibernate, {@code JpaTransactionManager}, a HikariCP pool): on its
     * first run the connection dies mid-transaction, HikariCP closes it on the failed statement, and Hibernate's
     * rollback fails with "Unable to rollback against JDBC Connection" ("Connection is closed"), which Spring throws as
     * a {@code JpaSystemException} without the application's exception. No commit was attempted. Later runs charge.
     */
    @PostMapping("/charges/crash-jpa")
    ResponseEntity<String> crashJpa(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      Jpa jpa = Jpa.get();
      int run = count(tenant, key);
      boolean first = runs(tenant, key) == 1;
      new org.springframework.transaction.support.TransactionTemplate(jpa.transactions).executeWithoutResult(s -> {
        jakarta.persistence.EntityManager em = org.springframework.orm.jpa.EntityManagerFactoryUtils
            .getTransactionalEntityManager(jpa.factory);
        em.createNativeQuery("INSERT INTO cut_charge(idem_key, run) VALUES (?1, ?2)").setParameter(1, key)
            .setParameter(2, run).executeUpdate();
        if (first) {
          terminate(((Number) em.createNativeQuery("SELECT pg_backend_pid()").getSingleResult()).intValue());
          em.createNativeQuery("SELECT 1").getSingleResult(); // fails: the connection is dead
        }
      });
      return ResponseEntity.status(201).body("{\"run\":" + run + "}");
    }

    /** Hibernate and a JpaTransactionManager on a HikariCP pool of {@link #dataSource}, built on first use. */
    private record Jpa(jakarta.persistence.EntityManagerFactory factory,
        org.springframework.orm.jpa.JpaTransactionManager transactions) {

      private static volatile Jpa jpa;

      static synchronized Jpa get() {
        if (jpa == null) {
          com.zaxxer.hikari.HikariConfig pool = new com.zaxxer.hikari.HikariConfig();
          pool.setDataSource(dataSource);
          pool.setMaximumPoolSize(2);
          org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean factory = new org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean();
          factory.setDataSource(new com.zaxxer.hikari.HikariDataSource(pool));
          factory.setPackagesToScan(io.converge.consumer.spring.jpa.Stock.class.getPackageName());
          factory.setJpaVendorAdapter(new org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter());
          factory.afterPropertiesSet();
          jpa = new Jpa(factory.getObject(),
              new org.springframework.orm.jpa.JpaTransactionManager(factory.getObject()));
        }
        return jpa;
      }
    }

    /** Terminates backend {@code pid} from another connection, waiting until it is gone. */
    private static void terminate(int pid) {
      try (java.sql.Connection other = dataSource.getConnection();
          java.sql.PreparedStatement st = other.prepareStatement("SELECT pg_terminate_backend(?, 10000)")) {
        st.setInt(1, pid);
        try (java.sql.ResultSet rs = st.executeQuery()) {
          if (!rs.next() || !rs.getBoolean(1)) {
            throw new IllegalStateException("backend " + pid + " was not terminated");
          }
        }
      } catch (java.sql.SQLException e) {
        throw new IllegalStateException(e);
      }
    }

    /** Keys whose large response had reached the client's connection while the handler was still writing it. */
    final Map<String, Boolean> streamed = new ConcurrentHashMap<>();

    /** Writes {@code X-Bytes} bytes of {@code x} (201) through the writer, 8 KiB at a time. */
    @PostMapping("/charges/large")
    void large(@RequestHeader("X-Tenant-Id") String tenant, @RequestHeader("Idempotency-Key") String key,
        @RequestHeader("X-Bytes") int bytes, jakarta.servlet.http.HttpServletResponse response)
        throws java.io.IOException {
      count(tenant, key);
      response.setStatus(201);
      response.setContentType("text/plain;charset=UTF-8");
      java.io.PrintWriter out = response.getWriter();
      String chunk = "x".repeat(8192);
      for (int written = 0; written < bytes; written += chunk.length()) {
        out.write(chunk, 0, Math.min(chunk.length(), bytes - written));
      }
      streamed.put(key, response.isCommitted());
    }

    /** A 500 the application answers on purpose: stored and replayed. */
    @PostMapping("/charges/refused")
    ResponseEntity<String> refused(@RequestHeader("X-Tenant-Id") String tenant,
        @RequestHeader("Idempotency-Key") String key) {
      return ResponseEntity.status(500).body("{\"run\":" + count(tenant, key) + ",\"error\":\"acquirer said no\"}");
    }

    @org.springframework.web.bind.annotation.ExceptionHandler(io.converge.core.DatabaseUnavailableException.class)
    ResponseEntity<String> databaseDown(io.converge.core.DatabaseUnavailableException e) {
      return ResponseEntity.status(500).body("{\"error\":\"database down\"}");
    }

    @Idempotent
    @PostMapping("/annotated/{id}")
    String annotated(@RequestHeader("X-Tenant-Id") String tenant, @RequestHeader("Idempotency-Key") String key) {
      return "run " + count(tenant, key);
    }

    /** A custom method (the verb after a colon in the last segment): a variable with a literal suffix. */
    @Idempotent
    @PostMapping("/v1/charges/{id}:refund")
    String refund(@RequestHeader("X-Tenant-Id") String tenant, @RequestHeader("Idempotency-Key") String key) {
      return "refund " + count(tenant, key);
    }

    /** A capture of the rest of the path. */
    @Idempotent
    @PostMapping("/v1/files/{*path}")
    String file(@RequestHeader("X-Tenant-Id") String tenant, @RequestHeader("Idempotency-Key") String key) {
      return "file " + count(tenant, key);
    }
  }
}
