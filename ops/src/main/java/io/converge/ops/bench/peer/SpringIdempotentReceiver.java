package io.converge.ops.bench.peer;

import io.converge.core.Envelope;
import io.converge.core.MessageIds;
import io.converge.ops.bench.BenchEnv;
import io.converge.ops.bench.BenchOrders;
import io.converge.ops.bench.NamedScenario;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.integration.channel.NullChannel;
import org.springframework.integration.handler.advice.IdempotentReceiverInterceptor;
import org.springframework.integration.jdbc.metadata.JdbcMetadataStore;
import org.springframework.integration.selector.MetadataStoreSelector;
import org.springframework.integration.support.MessageBuilder;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.messaging.MessageHandler;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Peer {@code si-idempotent-receiver}: what a Spring team would use instead of {@code IdempotentHandler}
 * (compare {@code consumer-idem} with it). Spring Integration's {@link IdempotentReceiverInterceptor} as its reference
 * documentation sets it up: a {@link MetadataStoreSelector} keyed by the message id header on a
 * {@link JdbcMetadataStore} (its PostgreSQL table {@code INT_METADATA_STORE} from the module's own schema script, its
 * default {@code FOR UPDATE} lock hint), duplicates sent to a discard channel. The selector's insert and the same
 * one-row handler as {@code consumer-plain} run in one Spring transaction ({@link TransactionTemplate} on a
 * {@link DataSourceTransactionManager}), as Converge's claim and handler do: the fair comparison. The broker is left
 * out, as in the consumer scenarios. Thread-safe.
 */
public final class SpringIdempotentReceiver extends NamedScenario {

  /** The metadata table of spring-integration-jdbc's {@code schema-postgresql.sql}. */
  private static final String CREATE_METADATA = """
      CREATE TABLE INT_METADATA_STORE (
        METADATA_KEY VARCHAR(255) NOT NULL,
        METADATA_VALUE VARCHAR(4000),
        REGION VARCHAR(100) NOT NULL,
        constraint INT_METADATA_STORE_PK primary key (METADATA_KEY, REGION))
      """;
  private static final byte[] PAYLOAD = "{\"order\":1,\"amount\":1999}".getBytes(StandardCharsets.UTF_8);

  private final AtomicLong rows = new AtomicLong();
  private final AtomicLong handled = new AtomicLong();
  private DataSource pool;
  private TransactionTemplate tx;
  private MessageHandler receiver;

  /** The {@code si-idempotent-receiver} scenario. */
  public SpringIdempotentReceiver() {
    super("si-idempotent-receiver", "msg");
  }

  @Override
  public void setUp(BenchEnv env, int threads) throws Exception {
    pool = env.newPool("bench_si", threads + 2);
    BenchOrders.create(pool);
    try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
      s.execute(CREATE_METADATA);
    }
    JdbcMetadataStore store = new JdbcMetadataStore(new JdbcTemplate(pool));
    store.afterPropertiesSet();
    store.start();
    IdempotentReceiverInterceptor interceptor = new IdempotentReceiverInterceptor(
        new MetadataStoreSelector(m -> m.getHeaders().get(Envelope.MESSAGE_ID, String.class), store));
    interceptor.setDiscardChannel(new NullChannel());
    interceptor.setBeanFactory(new DefaultListableBeanFactory());
    interceptor.afterPropertiesSet();
    MessageHandler handler = message -> {
      Connection c = DataSourceUtils.getConnection(pool); // the transaction's connection
      try {
        BenchOrders.insert(c, rows.incrementAndGet(), "customer");
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
      handled.incrementAndGet();
    };
    ProxyFactory proxy = new ProxyFactory(handler);
    proxy.addAdvice(interceptor);
    receiver = (MessageHandler) proxy.getProxy();
    tx = new TransactionTemplate(new DataSourceTransactionManager(pool));
  }

  @Override
  public int runOnce(int worker) {
    String id = MessageIds.shared().next();
    tx.executeWithoutResult(s -> receiver.handleMessage(
        MessageBuilder.withPayload(PAYLOAD).setHeader(Envelope.MESSAGE_ID, id).build()));
    return 1;
  }

  /** Redelivers the message {@code id}: true when the handler ran (a first delivery), false when discarded. */
  boolean deliver(String id) {
    long before = handled.get();
    tx.executeWithoutResult(s -> receiver.handleMessage(
        MessageBuilder.withPayload(PAYLOAD).setHeader(Envelope.MESSAGE_ID, id).build()));
    return handled.get() > before;
  }

  /** The business rows committed so far. */
  long orders() throws SQLException {
    return BenchOrders.count(pool);
  }

  @Override
  public void close() {
    // the pool is closed by the environment
  }
}
