package io.converge.producer.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.core.MessageIds;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.spring.TransactionalPublisher;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The Spring set-up every mode's auto-configuration IT shares: a context runner on a database, and a
 * {@link TransactionalPublisher} driven through Spring transactions that commit (with a business row
 * in {@code orders}) or roll back. Used by one test thread.
 */
public final class SpringPublishing {

  private final TransactionalPublisher publisher;
  private final TransactionTemplate tx;
  private final JdbcTemplate jdbc;

  private SpringPublishing(TransactionalPublisher publisher, DataSource db) {
    this.publisher = publisher;
    this.tx = new TransactionTemplate(new DataSourceTransactionManager(db));
    this.jdbc = new JdbcTemplate(db);
  }

  /** A runner of {@code autoConfigurations} with {@code db} as the application's {@code DataSource}. */
  public static ApplicationContextRunner runner(DataSource db, Class<?>... autoConfigurations) {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(autoConfigurations))
        .withBean(DataSource.class, () -> db);
  }

  /** Creates the business table {@code orders (id text PRIMARY KEY)} in {@code db}; returns {@code db}. */
  public static DataSource withOrders(DataSource db) {
    new JdbcTemplate(db).execute("CREATE TABLE orders (id text PRIMARY KEY)");
    return db;
  }

  /** Publishing through the context's {@link TransactionalPublisher} in transactions on {@code db}. */
  public static SpringPublishing of(ApplicationContext context, DataSource db) {
    return new SpringPublishing(context.getBean(TransactionalPublisher.class), db);
  }

  /** A message to {@code topic} with a fresh id, {@code key} (null for none) and {@code payload}. */
  public static OutgoingMessage message(String topic, String key, String payload) {
    return OutgoingMessage.builder(topic).id(MessageIds.shared().next()).key(key).payload(payload.getBytes(UTF_8))
        .build();
  }

  /** Publishes {@code m} in a transaction that inserts its id into {@code orders} and commits; returns the id. */
  public String committedWithOrder(OutgoingMessage m) {
    tx.executeWithoutResult(s -> {
      jdbc.update("INSERT INTO orders VALUES (?)", m.id());
      publisher.publish(m);
    });
    return m.id();
  }

  /**
   * Publishes {@code m} in a transaction that inserts its id into {@code orders} (unless {@code withOrder}
   * is false) and then throws, so it rolls back; returns the id.
   */
  public String rolledBack(OutgoingMessage m, boolean withOrder) {
    assertThatThrownBy(() -> tx.executeWithoutResult(s -> {
      if (withOrder) {
        jdbc.update("INSERT INTO orders VALUES (?)", m.id());
      }
      publisher.publish(m);
      throw new IllegalStateException("rolled back");
    })).hasMessage("rolled back");
    return m.id();
  }

  /** Publishes {@code m} alone in a transaction that commits (e.g. a marker); returns the id. */
  public String committed(OutgoingMessage m) {
    tx.executeWithoutResult(s -> publisher.publish(m));
    return m.id();
  }

  /** The publisher. */
  public TransactionalPublisher publisher() {
    return publisher;
  }

  /** Transactions on the database. */
  public TransactionTemplate transactions() {
    return tx;
  }
}
