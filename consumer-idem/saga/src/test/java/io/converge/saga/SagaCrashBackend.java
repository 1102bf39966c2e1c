package io.converge.saga;

import io.converge.consumer.IdempotentHandler;
import io.converge.producer.TxnProducer;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * A broker backend of the saga crash contract ({@link SagaCrashContract}): the coordinator's producer and the
 * consumers of its topics, built the same way in the test JVM and in the crash test's child JVM. Implementations
 * need a public no-argument constructor (the child instantiates them by name) and must be stateless.
 */
public interface SagaCrashBackend {

  /** The backend's own tables on {@code ds} (the saga's, outbox's and consumer's tables exist already). */
  default void migrate(DataSource ds) {
  }

  /**
   * A producer of {@code group} on {@code ds} for {@code topics}; two producers of one group recover each other's
   * units (check-backs, recovery scans). {@code env} holds the backend's addresses.
   */
  TxnProducer producer(String group, DataSource ds, List<String> topics, Map<String, String> env);

  /** Delivers {@code topic} from its oldest message to {@code handler}, in consumer group {@code group}. */
  AutoCloseable consume(String topic, String group, IdempotentHandler handler, Map<String, String> env);
}
