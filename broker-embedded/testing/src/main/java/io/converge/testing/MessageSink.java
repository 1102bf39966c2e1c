package io.converge.testing;

import java.util.List;

/** Records every delivery on one topic, duplicates included. Thread-safe. */
public interface MessageSink extends AutoCloseable {

  /** Every delivery so far. */
  List<Delivered> received();

  /** Stops consuming. */
  @Override
  void close();
}
