package io.converge.pulsar;

import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import io.converge.testing.ChildProducerFactory;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;

/** Builds the Pulsar producer under test, in the parent and in the crash tests' child JVM alike. */
public final class PulsarChildFactory implements ChildProducerFactory {

  /** Short timeouts, so that recovery is quick to observe. */
  static final Duration LOCAL_TX_TIMEOUT = Duration.ofSeconds(2);
  static final Duration COMMIT_MARGIN = Duration.ofSeconds(2);
  /**
   * The shortest the backend accepts, and its default: the local-transaction timeout plus the commit
   * margin. The contract waits it out in most tests (recovery window), so each second here costs ~15 s.
   */
  static final Duration TXN_TIMEOUT = LOCAL_TX_TIMEOUT.plus(COMMIT_MARGIN);
  /** At most the commit margin (checked when the backend starts). */
  static final Duration SEND_TIMEOUT = Duration.ofSeconds(2);

  @Override
  public TxnProducer create(String group, String topic, DataSource db, Map<String, String> env) {
    Migrations.apply(db, "pulsar");
    return producer(group, topic, db, env);
  }

  /** The producer, on a database that has the migrations already. */
  static TxnProducer producer(String group, String topic, DataSource db, Map<String, String> env) {
    return TxnProducer.builder()
        .group(group)
        .dataSource(db)
        .backend(PulsarBackend.serviceUrl(env.get("serviceUrl"))
            .transactionTimeout(TXN_TIMEOUT)
            .commitMargin(COMMIT_MARGIN)
            .sendTimeout(SEND_TIMEOUT)
            .recoveryInterval(Duration.ofMillis(500)))
        .topics(topic)
        .localTransactionTimeout(LOCAL_TX_TIMEOUT)
        .build();
  }
}
