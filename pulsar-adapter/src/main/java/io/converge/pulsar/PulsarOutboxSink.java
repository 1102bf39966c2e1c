package io.converge.pulsar;

import io.converge.outbox.spi.OutboxRecord;
import io.converge.outbox.spi.OutboxSink;
import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import io.converge.core.InvalidMessageException;
import io.converge.core.internal.Require;
import io.converge.pulsar.internal.PulsarClients;
import io.converge.pulsar.internal.PulsarErrors;
import io.converge.pulsar.internal.PulsarSettings;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pulsar.client.api.HashingScheme;
import org.apache.pulsar.client.api.MessageRoutingMode;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes outbox rows to Pulsar, for the outbox relay ({@code converge-outbox-relay}): one client, one
 * producer per topic created on first use; the row's key is the Pulsar message key (the message id when
 * the row has none), and the key's hash selects the partition of a partitioned topic, so one key stays on
 * one partition; each send is synchronous, so the relay's order per key is the order consumers see. The
 * envelope travels as message properties ({@code converge-message-id}, {@code converge-tenant}, ...),
 * exactly as the Pulsar {@code TxnProducer} backend and the RocketMQ sink send it. Thread-safe.
 *
 * <p>A send that cannot reach a broker (timeout, connection refused, lookup, backlog quota, topic being
 * moved) is reported as {@link BrokerUnavailableException} and never parks a message; a message Pulsar
 * refuses for itself or its topic (too large, topic does not exist and may not be created, terminated, not
 * allowed, not authorized, incompatible schema) is reported as {@link InvalidMessageException} and counts
 * as an attempt, so the relay parks its key after its maximum attempts instead of retrying it forever.
 *
 * <p>Needs {@code org.apache.pulsar:pulsar-client} and {@code io.converge:converge-outbox-relay} (an
 * optional dependency of {@code converge-pulsar-adapter}).
 */
public final class PulsarOutboxSink implements OutboxSink {

  private static final Logger LOG = LoggerFactory.getLogger(PulsarOutboxSink.class);

  private final PulsarClient client;
  private final Duration sendTimeout;
  private final Map<String, Producer<byte[]>> producers = new ConcurrentHashMap<>();

  private PulsarOutboxSink(PulsarClient client, Duration sendTimeout) {
    this.client = client;
    this.sendTimeout = sendTimeout;
  }

  /** A builder for a sink on the Pulsar cluster of {@code serviceUrl} ({@code pulsar://host:port}). */
  public static Builder serviceUrl(String serviceUrl) {
    PulsarSettings.checkServiceUrl("pulsar.serviceUrl", serviceUrl);
    return new Builder(serviceUrl);
  }

  @Override
  public String name() {
    return "pulsar";
  }

  @Override
  public void send(OutboxRecord r) throws InterruptedException {
    String key = r.key() != null ? r.key() : r.messageId();
    try {
      producer(r).newMessage().key(key).properties(r.headers()).value(r.payload()).send();
    } catch (PulsarClientException e) {
      if (Thread.currentThread().isInterrupted()) {
        throw new InterruptedException("interrupted sending message " + r.messageId());
      }
      throw PulsarErrors.classify(e, r.messageId(), r.topic());
    }
  }

  /**
   * The producer of the record's topic, created once; why it cannot be opened is classified as a send failure.
   * Its creation waits at most the send timeout: a broker that accepts connections and never answers (frozen,
   * stalled) would hold it until the client's keep-alive gives up, 30 s later.
   */
  private Producer<byte[]> producer(OutboxRecord r) throws PulsarClientException, InterruptedException {
    Producer<byte[]> p = producers.get(r.topic());
    if (p != null) {
      return p;
    }
    CompletableFuture<Producer<byte[]>> creating = client.newProducer()
        .topic(r.topic())
        .sendTimeout((int) sendTimeout.toMillis(), TimeUnit.MILLISECONDS)
        // the relay sends one message at a time and waits: batching would only add its delay
        .enableBatching(false)
        // one key, one partition (a message without a key never reaches here: the message id is its key)
        .messageRoutingMode(MessageRoutingMode.RoundRobinPartition)
        .hashingScheme(HashingScheme.Murmur3_32Hash)
        .blockIfQueueFull(true)
        .createAsync();
    Producer<byte[]> created;
    try {
      created = creating.get(sendTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException | InterruptedException e) {
      creating.thenAccept(Producer::closeAsync); // one created after all is not used
      if (e instanceof InterruptedException interrupted) {
        throw interrupted;
      }
      throw new PulsarClientException.TimeoutException(
          "the producer of " + r.topic() + " was not created within " + sendTimeout);
    } catch (ExecutionException e) {
      throw PulsarClientException.unwrap(e.getCause());
    }
    Producer<byte[]> raced = producers.putIfAbsent(r.topic(), created);
    if (raced != null) {
      created.closeAsync();
      return raced;
    }
    return created;
  }

  @Override
  public void close() {
    for (Producer<byte[]> p : producers.values()) {
      try {
        p.close();
      } catch (PulsarClientException e) {
        LOG.debug("closing the relay's Pulsar producer of {}: {}", p.getTopic(), e.toString());
      }
    }
    producers.clear();
    PulsarClients.closeInBackground(client, LOG, "the relay's sink");
  }

  /** Settings of a {@link PulsarOutboxSink}; not thread-safe. */
  public static final class Builder {

    private final String serviceUrl;
    private Duration sendTimeout = Duration.ofSeconds(3);

    private Builder(String serviceUrl) {
      this.serviceUrl = serviceUrl;
    }

    /** How long one send may take before it counts as "broker unavailable"; default 3 s, at least 100 ms. */
    public Builder sendTimeout(Duration timeout) {
      this.sendTimeout = timeout;
      return this;
    }

    /**
     * Validates the settings and creates the client (it connects on the first send).
     *
     * @throws IllegalArgumentException naming a bad setting and its value
     * @throws ConvergeException when the client cannot be created
     */
    public PulsarOutboxSink build() {
      Require.atLeast("pulsar.sendTimeout", sendTimeout, Duration.ofMillis(100), "100 ms");
      try {
        PulsarClient client = PulsarClient.builder().serviceUrl(serviceUrl)
            .operationTimeout((int) sendTimeout.toMillis(), TimeUnit.MILLISECONDS)
            .connectionTimeout((int) sendTimeout.toMillis(), TimeUnit.MILLISECONDS)
            .build();
        return new PulsarOutboxSink(client, sendTimeout);
      } catch (PulsarClientException e) {
        throw new ConvergeException("The relay's Pulsar client cannot be created for " + serviceUrl, e);
      }
    }
  }
}
