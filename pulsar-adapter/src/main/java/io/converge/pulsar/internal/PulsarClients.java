package io.converge.pulsar.internal;

import org.apache.pulsar.client.api.PulsarClient;
import org.slf4j.Logger;

/**
 * Closing a {@link PulsarClient} this library created, once its owner closed the client's producers and consumers.
 * The client's own {@code close()} ends by shutting its Netty event loops down gracefully, which waits Netty's quiet
 * period (2 s, not configurable through the client) although nothing is left to run on them: every {@code close()} of
 * a Converge producer, consumer or sink would take 2 s. The client's closing is therefore started and left to finish on
 * its own thread; what matters to the caller (its producers flushed and closed, its consumers closed) is done before.
 * A failure to close is logged at debug, as before. Stateless.
 */
public final class PulsarClients {

  private PulsarClients() {
  }

  /**
   * Starts closing {@code client} (its producers and consumers already closed by the caller) and returns without
   * waiting for its I/O threads to end.
   *
   * @param what the owner, for the log
   */
  public static void closeInBackground(PulsarClient client, Logger log, String what) {
    client.closeAsync().whenComplete((done, e) -> {
      if (e != null) {
        log.debug("Closing the Pulsar client of {}: {}", what, e.toString());
      }
    });
  }
}
