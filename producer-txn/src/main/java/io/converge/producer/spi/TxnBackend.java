package io.converge.producer.spi;

/** A started backend of one producer. Thread-safe. */
public interface TxnBackend extends AutoCloseable {

  /** A new backend transaction for one unit of work (called on the unit's thread). */
  BackendTransaction begin();

  /** Stops the backend's clients. Idempotent. */
  @Override
  void close();
}
