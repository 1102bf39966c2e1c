package io.converge.examples.account;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.spi.ConsumerBinding;
import io.converge.examples.ServiceArgs;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Spring Data's {@code save} of a row built with its constructor persists it (an {@code INSERT}), for a versioned
 * entity ({@code Account}, {@code VersionedEntity}) and a row keyed by its order ({@code AccountEntry},
 * {@code OrderKeyedRow}) alike: the entity saved is the one managed (not a merged copy), a second row with the same
 * key is refused by the database, and the first stays as it was written. A merge (what {@code save} did while it
 * took every row with an id for a stored one) read the row and overwrote it.
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class NewRowsIT {

  @Test
  void aNewRowWithTheKeyOfAStoredOneIsRefusedNotMerged(EmbeddedRocketMQ mq, ConvergePostgres pg) {
    String run = "rows-" + UUID.randomUUID().toString().substring(0, 6);
    PGSimpleDataSource ds = (PGSimpleDataSource) pg.newSchema("account_" + run.replace('-', '_'));
    ConsumerBinding noBroker = (topic, handler) -> () -> {
    };
    try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(AccountServiceApp.class)
        .properties("spring.config.name=account")
        .initializers(c -> c.getBeanFactory().registerSingleton("testConsumerBinding", noBroker))
        .run(ServiceArgs.outbox("account", mq, pg, ds, run))) {
      AccountRepository accounts = ctx.getBean(AccountRepository.class);
      AccountEntryRepository entries = ctx.getBean(AccountEntryRepository.class);
      TransactionTemplate tx = new TransactionTemplate(ctx.getBean(PlatformTransactionManager.class));
      JdbcTemplate db = new JdbcTemplate(ds);

      Account account = new Account("c-1", 5_000);
      Account saved = tx.execute(s -> accounts.save(account));
      assertThat(saved).as("persisted, not merged into a copy").isSameAs(account);
      assertThat(account.getVersion()).as("persisted at version 0").isZero();
      assertThatThrownBy(() -> tx.executeWithoutResult(s -> accounts.save(new Account("c-1", 1))))
          .isInstanceOf(DataIntegrityViolationException.class);
      assertThat(db.queryForObject("SELECT balance_cents FROM account WHERE customer_id = 'c-1'", Long.class))
          .isEqualTo(5_000);

      AccountEntry entry = new AccountEntry("ord-1", "c-1", 700, Instant.now());
      AccountEntry savedEntry = tx.execute(s -> entries.save(entry));
      assertThat(savedEntry).as("persisted, not merged into a copy").isSameAs(entry);
      assertThatThrownBy(() -> tx.executeWithoutResult(
          s -> entries.save(new AccountEntry("ord-1", "c-1", 900, Instant.now()))))
          .isInstanceOf(DataIntegrityViolationException.class);
      assertThat(db.queryForObject("SELECT amount_cents FROM account_entry WHERE order_id = 'ord-1'", Long.class))
          .isEqualTo(700);
      // a row read back is a stored one: save merges it
      Boolean readBackIsNew = tx.execute(s -> entries.findById("ord-1").orElseThrow().isNew());
      assertThat(readBackIsNew).isFalse();
    }
  }
}
