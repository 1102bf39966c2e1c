package io.converge.pulsar;

import io.converge.producer.TxnProducer;
import io.converge.testing.ContractBroker;
import io.converge.testing.MessageSink;
import io.converge.testing.TxnProducerContract;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The shared contract, against the Pulsar-transactions backend on the embedded Pulsar.
 *
 * <p>Broker down: the embedded Pulsar keeps its metadata in memory, so it cannot restart on its
 * data; the contract's broker outage freezes its JVM (SIGSTOP: every request times out, like a hung or
 * partitioned broker) and resumes it (SIGCONT), data and connections intact.
 */
class PulsarTxnProducerIT extends TxnProducerContract {

  @RegisterExtension
  static final PulsarBroker pulsar = new PulsarBroker();

  PulsarTxnProducerIT() {
    super(Staging.BROKER, PulsarChildFactory.class);
  }

  @Override
  protected TxnProducer newProducer(String group, String topic, DataSource db) {
    if (db == this.db) { // not the contract's unreachable database
      migrateOnce(db, "pulsar");
    }
    return PulsarChildFactory.producer(group, topic, db, childEnv());
  }

  @Override
  protected ContractBroker broker() {
    return ContractBroker.of(PulsarTxnProducerIT::createTopic, pulsar.server()::freeze, pulsar.server()::thaw);
  }

  private static void createTopic(String topic) {
    HttpRequest put = HttpRequest
        .newBuilder(URI.create(pulsar.server().httpUrl() + "/admin/v2/persistent/public/default/" + topic))
        .PUT(HttpRequest.BodyPublishers.noBody()).build();
    try {
      int status = HttpClient.newHttpClient().send(put, HttpResponse.BodyHandlers.discarding()).statusCode();
      if (status != 204 && status != 409) {
        throw new IllegalStateException("creating topic " + topic + " answered " + status);
      }
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  protected MessageSink consume(String topic) {
    return new PulsarSink(pulsar.serviceUrl(), topic);
  }

  @Override
  protected Map<String, String> childEnv() {
    return Map.of("serviceUrl", pulsar.serviceUrl());
  }

  @Override
  protected Duration recoveryWindow() {
    // the Pulsar transaction's timeout, then a recovery scan (every 500 ms) that re-publishes
    return PulsarChildFactory.TXN_TIMEOUT.plusSeconds(2);
  }

  /**
   * The Pulsar analogue of "recovery discarded the message": the broker aborted the unit's Pulsar
   * transaction on its timeout (observed at T + 0.04-0.46 s; the unit's transaction opened just before
   * this call). The unit then refuses to commit its DB transaction (LateCommitFencedException).
   */
  @Override
  protected void awaitDiscarded(String id) {
    try {
      // the thing under test is a timeout: the broker aborts on its own clock, and no client call reveals
      // the abort without taking part in the transaction (a probe would race the unit's own commit)
      Thread.sleep(PulsarChildFactory.TXN_TIMEOUT.plusMillis(1500).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
