package io.converge.producer.spring;

import io.converge.producer.spi.ProducerMetrics;

/** Makes the metrics of one producer group; a bean of this type replaces the Micrometer default. */
@FunctionalInterface
public interface ProducerMetricsFactory {

  /** The metrics of producer group {@code group}. */
  ProducerMetrics forGroup(String group);
}
