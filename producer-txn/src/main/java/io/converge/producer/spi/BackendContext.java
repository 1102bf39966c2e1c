package io.converge.producer.spi;

import io.converge.core.tracing.Tracing;
import io.converge.producer.internal.TxnLog;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/**
 * What a backend gets from its producer.
 *
 * @param group the producer group (the envelope's source)
 * @param dataSource the producer's database
 * @param log the transaction log on that database
 * @param localTransactionTimeout how long a unit of work may take; older unknown messages are rolled back
 * @param topics the topics declared at build time (registered at start), possibly empty
 * @param metrics where to count
 * @param clock the time source
 * @param tracing where a backend's own sends go (e.g. a recovery's re-publish), as the producer's publish spans
 */
public record BackendContext(
    String group,
    DataSource dataSource,
    TxnLog log,
    Duration localTransactionTimeout,
    List<String> topics,
    ProducerMetrics metrics,
    Clock clock,
    Tracing tracing) {

  /** A context that traces with {@link Tracing#global()}. */
  public BackendContext(String group, DataSource dataSource, TxnLog log, Duration localTransactionTimeout,
      List<String> topics, ProducerMetrics metrics, Clock clock) {
    this(group, dataSource, log, localTransactionTimeout, topics, metrics, clock, Tracing.global());
  }
}
