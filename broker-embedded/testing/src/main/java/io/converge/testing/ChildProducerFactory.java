package io.converge.testing;

import io.converge.producer.TxnProducer;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Creates the producer under test inside the child JVM of a crash test. Implementations need a public
 * no-argument constructor.
 */
public interface ChildProducerFactory {

  /** A producer of {@code group} on {@code db}; {@code env} holds what the backend needs (addresses). */
  TxnProducer create(String group, String topic, DataSource db, Map<String, String> env);
}
