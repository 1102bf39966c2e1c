package io.converge.pulsar;

import io.converge.consumer.IdempotentHandler;
import io.converge.core.Migrations;
import io.converge.producer.TxnProducer;
import io.converge.saga.SagaCrashBackend;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * Pulsar transactions for the saga's crash contract ({@link PulsarSagaCrashIT}), in the test JVM and the child alike;
 * {@code env} holds {@code serviceUrl}. The timeouts of {@link PulsarChildFactory}: a transaction left open by the
 * killed coordinator is aborted by the broker after 4 s, and recovery scans every 500 ms.
 */
public final class PulsarSagaCrashBackend implements SagaCrashBackend {

  /**
   * One client per service URL for the consumers of the JVM, never closed by them: a consumer's own client takes
   * 2 s to close, four consumers per test.
   */
  private static final Map<String, PulsarClient> CLIENTS = new ConcurrentHashMap<>();

  @Override
  public void migrate(DataSource ds) {
    Migrations.apply(ds, "pulsar");
  }

  @Override
  public TxnProducer producer(String group, DataSource ds, List<String> topics, Map<String, String> env) {
    return TxnProducer.builder().group(group).dataSource(ds)
        .backend(PulsarBackend.serviceUrl(env.get("serviceUrl")).transactionTimeout(PulsarChildFactory.TXN_TIMEOUT)
            .commitMargin(PulsarChildFactory.COMMIT_MARGIN).sendTimeout(PulsarChildFactory.SEND_TIMEOUT)
            .recoveryInterval(Duration.ofMillis(500)))
        .topics(topics.toArray(String[]::new)).localTransactionTimeout(PulsarChildFactory.LOCAL_TX_TIMEOUT).build();
  }

  @Override
  public AutoCloseable consume(String topic, String group, IdempotentHandler handler, Map<String, String> env) {
    PulsarClient client = CLIENTS.computeIfAbsent(env.get("serviceUrl"), url -> {
      try {
        PulsarClient created = PulsarClient.builder().serviceUrl(url).build();
        Runtime.getRuntime().addShutdownHook(new Thread(created::closeAsync, "close-saga-crash-pulsar-client"));
        return created;
      } catch (PulsarClientException e) {
        throw new IllegalStateException(e);
      }
    });
    return PulsarIdempotentConsumer.builder().client(client).topic(topic).subscription(group)
        .handler(handler).redeliveryDelay(Duration.ofMillis(200)).start();
  }
}
