package io.converge.consumer.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.consumer.BusinessException;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MoneyAnomalyException;
import io.converge.consumer.Outcome;
import io.converge.consumer.spring.jpa.Stock;
import io.converge.core.Envelope;
import io.converge.core.Migrations;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.SharedEntityManagerCreator;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Issue 13.2: with JPA ({@code JpaTransactionManager}, as in the examples) an entity that the failing
 * handler changed and did not flush must not reach the database when the failure outcome is recorded.
 */
class FailedJpaHandlerWritesNothingIT {

  private static DataSource ds;
  private static LocalContainerEntityManagerFactoryBean factory;
  private static EntityManagerFactory emf;
  private static JpaTransactionManager transactionManager;

  @BeforeAll
  static void jpa() {
    ds = ConvergePostgres.shared().newSchema("failjpa");
    Migrations.apply(ds, "consumer");
    factory = new LocalContainerEntityManagerFactoryBean();
    factory.setDataSource(ds);
    factory.setPackagesToScan(Stock.class.getPackageName());
    factory.setJpaVendorAdapter(new HibernateJpaVendorAdapter());
    factory.setJpaPropertyMap(Map.of("hibernate.hbm2ddl.auto", "create"));
    factory.afterPropertiesSet();
    emf = factory.getObject();
    transactionManager = new JpaTransactionManager(emf);
  }

  @AfterAll
  static void close() {
    factory.destroy();
  }

  @Test
  void anUnflushedEntityChangeOfABusinessFailureIsNotWritten() {
    scenario(() -> new BusinessException("OUT_OF_STOCK", "no stock"), Outcome.BUSINESS_FAILURE);
  }

  @Test
  void anUnflushedEntityChangeOfAMoneyAnomalyIsNotWritten() {
    scenario(() -> new MoneyAnomalyException("amount mismatch", "10.00 EUR", "1.00 EUR"), Outcome.TICKETED);
  }

  private void scenario(Supplier<RuntimeException> failure, Outcome expected) {
    String sku = "sku-" + UUID.randomUUID();
    EntityManager em = SharedEntityManagerCreator.createSharedEntityManager(emf);
    new TransactionTemplate(transactionManager).executeWithoutResult(s -> em.persist(new Stock(sku, 10)));
    IdempotentHandler handler = IdempotentHandler.builder().group("jpa_" + UUID.randomUUID().toString().substring(0, 8))
        .transactions(new SpringTransactionRunner(transactionManager, ds))
        .handler((c, m) -> {
          em.find(Stock.class, sku).reserve(); // changed in the persistence context, not flushed
          if (m.payloadAsString().equals("fail")) {
            throw failure.get();
          }
        }).build();

    String failing = UUID.randomUUID().toString();
    assertThat(handler.handle(message(failing, "fail"))).isEqualTo(expected);
    JdbcTemplate jdbc = new JdbcTemplate(ds);
    assertThat(jdbc.queryForObject("SELECT available FROM jpa_stock WHERE sku = ?", Integer.class, sku))
        .as("the failing handler's unflushed entity change").isEqualTo(10);
    assertThat(jdbc.queryForList("SELECT outcome FROM converge_dedup WHERE message_id = ?", String.class, failing))
        .containsExactly(expected.name());

    // a successful handler's unflushed change is written at its commit, as JPA promises
    assertThat(handler.handle(message(UUID.randomUUID().toString(), "ok"))).isEqualTo(Outcome.PROCESSED);
    assertThat(jdbc.queryForObject("SELECT available FROM jpa_stock WHERE sku = ?", Integer.class, sku)).isEqualTo(9);
  }

  private static IncomingMessage message(String id, String body) {
    return IncomingMessage.builder().topic("orders").header(Envelope.MESSAGE_ID, id).payload(body).build();
  }
}
