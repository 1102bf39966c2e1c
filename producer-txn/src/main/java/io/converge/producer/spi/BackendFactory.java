package io.converge.producer.spi;

/** Creates the backend of a producer at {@code build()}. Implementations are immutable settings. */
public interface BackendFactory {

  /** The backend's name, e.g. {@code rocketmq}. */
  String name();

  /** A new, started backend for the producer described by {@code context}. */
  TxnBackend create(BackendContext context);
}
