package io.converge.pulsar;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.spi.ConsumerBinding;
import io.converge.consumer.spi.HeldReleaser;
import io.converge.consumer.spi.InFlightHandlers;
import io.converge.core.ConvergeException;
import io.converge.core.internal.Require;
import io.converge.pulsar.internal.PulsarClients;
import io.converge.pulsar.internal.BrokerWait;
import io.converge.pulsar.internal.PulsarErrors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageListener;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Pulsar binding of an {@link IdempotentHandler}: a {@code Key_Shared} subscription (one key is
 * handled by one consumer at a time, in order) with {@link Builder#consumers(int) n} consumers, each
 * delivering one message at a time to the handler. A message is acknowledged only after the handler
 * returned an outcome, which it records in the same transaction as the handler's writes (processed,
 * duplicate, business failure) or parks ({@code converge_dlq}, after the failure policy's attempts);
 * when the handler cannot even record an outcome (database down) the message is negatively
 * acknowledged and Pulsar redelivers it after {@link Builder#redeliveryDelay(Duration)}. While the
 * database or a broker the handler publishes to is unavailable, the handler waits on the consumer's
 * listener thread and runs the same message again when the outage ends (no attempt counted): that
 * consumer takes no new message meanwhile. No ack timeout is set, so Pulsar does not redeliver a
 * message while it waits; {@link #close()} interrupts the wait and the message is redelivered.
 * Duplicates, from Pulsar or from a producer, are absorbed by the handler's dedup.
 *
 * <p><b>Per-key order</b>: {@code Key_Shared} hands one key to one consumer, which handles it in publish
 * order. Limit: a message whose outcome could not be recorded at all is negatively acknowledged, and Pulsar may
 * deliver it again after later messages of its key (an outage is waited out in place, not nacked). A message parked in {@code converge_dlq} holds the later messages of its key (see
 * {@link IdempotentHandler#releaseHeld}); this consumer releases them every {@link Builder#releaseInterval}
 * once the parked one is resumed or discarded. Thread-safe.
 */
public final class PulsarIdempotentConsumer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(PulsarIdempotentConsumer.class);
  /** The longest one subscription attempt of a start-up wait may take. */
  private static final Duration ATTEMPT = Duration.ofSeconds(10);

  /** The client this consumer created, closed with it; null when the application gave its own. */
  private final PulsarClient ownedClient;
  private final List<Consumer<byte[]>> consumers;
  private final String subscription;
  private final InFlightHandlers inFlight;
  /** Null when the consumer did not start. */
  private final HeldReleaser releaser;

  private PulsarIdempotentConsumer(PulsarClient ownedClient, List<Consumer<byte[]>> consumers, String subscription,
      InFlightHandlers inFlight, HeldReleaser releaser) {
    this.ownedClient = ownedClient;
    this.consumers = consumers;
    this.subscription = subscription;
    this.inFlight = inFlight;
    this.releaser = releaser;
  }

  /** A builder; {@code topic} and {@code handler} and one of {@code serviceUrl}/{@code client} are required. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A {@link ConsumerBinding} that subscribes each handler with {@code settings} (its topic and handler
   * set per subscription), e.g. the transport under Spring's {@code @IdempotentConsumer}.
   */
  public static ConsumerBinding binding(java.util.function.Supplier<Builder> settings) {
    Objects.requireNonNull(settings, "settings");
    return (topic, handler) -> settings.get().topic(topic).handler(handler).start()::close;
  }

  /** The subscription name (the handler's group unless set). */
  public String subscription() {
    return subscription;
  }

  /**
   * Interrupts handlers waiting out an outage (their messages are not acked and are redelivered), then
   * closes the consumers (and the client when this consumer created it). Idempotent.
   */
  @Override
  public void close() {
    inFlight.close();
    if (releaser != null) {
      releaser.close();
    }
    for (Consumer<byte[]> c : consumers) {
      try {
        c.close();
      } catch (PulsarClientException e) {
        log.debug("closing Pulsar consumer of {}: {}", subscription, e.toString());
      }
    }
    if (ownedClient != null) {
      PulsarClients.closeInBackground(ownedClient, log, "subscription " + subscription);
    }
  }

  /** Delivers one message at a time per consumer to the handler; acks on an outcome, nacks otherwise. */
  private static final class Listener implements MessageListener<byte[]> {

    private static final long serialVersionUID = 1L;
    private final transient IdempotentHandler handler;
    private final transient InFlightHandlers inFlight;

    Listener(IdempotentHandler handler, InFlightHandlers inFlight) {
      this.handler = handler;
      this.inFlight = inFlight;
    }

    @Override
    public void received(Consumer<byte[]> consumer, Message<byte[]> m) {
      IncomingMessage message = IncomingMessage.builder()
          .topic(m.getTopicName())
          .headers(m.getProperties())
          .payload(m.getValue() == null ? new byte[0] : m.getValue())
          .brokerMessageId(m.getMessageId().toString())
          .brokerKey(m.hasKey() ? m.getKey() : null)
          .deliveryCount(m.getRedeliveryCount() + 1)
          .build();
      Outcome outcome;
      try {
        outcome = inFlight.handle(handler, message);
      } catch (RuntimeException e) {
        // nothing recorded (the database refused even the failure): Pulsar must keep the message
        log.warn("Pulsar message {} on {} of subscription {} not acked, it will be redelivered: {}", m.getMessageId(),
            m.getTopicName(), consumer.getSubscription(), e.toString());
        consumer.negativeAcknowledge(m);
        return;
      }
      log.debug("Pulsar message {} of subscription {}: {}, acking", m.getMessageId(), consumer.getSubscription(),
          outcome);
      consumer.acknowledgeAsync(m).exceptionally(e -> {
        // the outcome is recorded: a redelivery after a lost ack is a duplicate, absorbed by the dedup
        log.debug("ack of {} failed, a duplicate may follow: {}", m.getMessageId(), e.toString());
        return null;
      });
    }
  }

  /**
   * The validated settings of a consumer ({@link Builder#build()}); see the builder's methods for each default.
   *
   * @param serviceUrl the service URL of a client the consumer creates and closes, or null
   * @param client the application's own client (not closed by the consumer), or null; exactly one of the two is set
   * @param topic the topic
   * @param subscription the subscription (the handler's group unless set)
   * @param handler the idempotent handler
   * @param consumers consumers on the subscription, 1-64
   * @param receiverQueueSize messages each consumer prefetches, 1-10000
   * @param redeliveryDelay delay before Pulsar redelivers a message that could not be handled, not negative
   * @param initialPosition where a new subscription starts
   * @param releaseInterval how often held messages are looked for, 10 ms..1 h
   * @param startupWait how long the subscription waits for an unavailable Pulsar, 0..1 h (0: one attempt)
   */
  public record Settings(String serviceUrl, PulsarClient client, String topic, String subscription,
      IdempotentHandler handler, int consumers, int receiverQueueSize, Duration redeliveryDelay,
      SubscriptionInitialPosition initialPosition, Duration releaseInterval, Duration startupWait) {

    /** Settings with the default start-up wait, 60 s. */
    public Settings(String serviceUrl, PulsarClient client, String topic, String subscription,
        IdempotentHandler handler, int consumers, int receiverQueueSize, Duration redeliveryDelay,
        SubscriptionInitialPosition initialPosition, Duration releaseInterval) {
      this(serviceUrl, client, topic, subscription, handler, consumers, receiverQueueSize, redeliveryDelay,
          initialPosition, releaseInterval, BrokerWait.DEFAULT_LIMIT);
    }
  }

  /**
   * Subscribes with {@code settings}, waiting up to {@link Settings#startupWait()} for a Pulsar that is unavailable
   * (each failed attempt closed, the next one after a backoff, each logged at WARN).
   *
   * @throws io.converge.core.BrokerUnavailableException naming the start-up wait when Pulsar stayed unavailable
   * @throws ConvergeException when Pulsar refuses the subscription
   */
  public static PulsarIdempotentConsumer start(Settings settings) {
    Objects.requireNonNull(settings, "settings");
    BrokerWait.check(BrokerWait.SETTING, settings.startupWait());
    String url = settings.serviceUrl() != null ? settings.serviceUrl() : "(the application's client)";
    return BrokerWait.upTo(settings.startupWait()).run("the subscription " + settings.subscription() + " to "
        + settings.topic(), url, () -> Builder.subscribe(settings));
  }

  /** Settings of a {@link PulsarIdempotentConsumer}; validated by {@link #build()}. Not thread-safe. */
  public static final class Builder {

    private String serviceUrl;
    private PulsarClient client;
    private String topic;
    private String subscription;
    private IdempotentHandler handler;
    private int consumers = 4;
    private int receiverQueueSize = 100;
    private Duration redeliveryDelay = Duration.ofSeconds(1);
    private SubscriptionInitialPosition initialPosition = SubscriptionInitialPosition.Earliest;
    private Duration releaseInterval = Duration.ofSeconds(5);
    private Duration startupWait = BrokerWait.DEFAULT_LIMIT;

    private Builder() {
    }

    /**
     * How long {@link #start()} waits for a Pulsar that is unavailable (connection refused or timed out, lookup
     * timeout): it subscribes again with backoff (0.5 s doubling up to 5 s; one attempt waits at most 10 s), each
     * failed attempt closed and logged at WARN, then fails with a {@code BrokerUnavailableException} naming this
     * limit; a refused subscription or an authorization error fails at once. {@code 0}: one attempt, as before.
     * Between 0 and 1 h; default 60 s, as the database's start-up wait. Spring: {@code converge.startup.broker-wait}.
     */
    public Builder startupWait(Duration wait) {
      this.startupWait = wait;
      return this;
    }

    /**
     * How often this consumer looks for held messages to release (those behind a parked message of their key
     * that was resumed or discarded); 10 ms..1 h, default 5 s.
     */
    public Builder releaseInterval(Duration interval) {
      this.releaseInterval = interval;
      return this;
    }

    /** The Pulsar service URL ({@code pulsar://host:6650}); a client is created and closed with the consumer. */
    public Builder serviceUrl(String serviceUrl) {
      this.serviceUrl = serviceUrl;
      return this;
    }

    /** A client of one's own, shared and not closed by the consumer; instead of {@link #serviceUrl}. */
    public Builder client(PulsarClient client) {
      this.client = client;
      return this;
    }

    /** The topic. Required. */
    public Builder topic(String topic) {
      this.topic = topic;
      return this;
    }

    /** The subscription; default the handler's {@link IdempotentHandler#group() group}. */
    public Builder subscription(String subscription) {
      this.subscription = subscription;
      return this;
    }

    /** The idempotent handler. Required. */
    public Builder handler(IdempotentHandler handler) {
      this.handler = handler;
      return this;
    }

    /** Consumers on the subscription, each handling one message at a time; 1-64, default 4. */
    public Builder consumers(int consumers) {
      this.consumers = consumers;
      return this;
    }

    /**
     * Messages each consumer prefetches; 1-10000, default 100. Smaller spreads a backlog more evenly over
     * the consumers (and over instances joining the {@code Key_Shared} subscription); larger helps throughput.
     */
    public Builder receiverQueueSize(int receiverQueueSize) {
      this.receiverQueueSize = receiverQueueSize;
      return this;
    }

    /** Delay before Pulsar redelivers a message that could not be handled; default 1 s. */
    public Builder redeliveryDelay(Duration delay) {
      this.redeliveryDelay = delay;
      return this;
    }

    /** Where a new subscription starts; default {@code Earliest}, so nothing published before it is skipped. */
    public Builder initialPosition(SubscriptionInitialPosition position) {
      this.initialPosition = position;
      return this;
    }

    /**
     * Validates the settings.
     *
     * @throws IllegalArgumentException naming a missing or invalid setting and its value
     */
    public Settings build() {
      Require.that(topic != null && !topic.isBlank(), "pulsar.topic", "not be blank", topic);
      Require.that(handler != null, "pulsar.handler", "be set", null);
      if ((serviceUrl == null || serviceUrl.isBlank()) == (client == null)) {
        throw new IllegalArgumentException(
            "pulsar: exactly one of serviceUrl and client must be set, but serviceUrl was "
                + serviceUrl + " and client " + client);
      }
      Require.between("pulsar.consumers", consumers, 1, 64);
      Require.between("pulsar.receiverQueueSize", receiverQueueSize, 1, 10_000);
      Require.notNegative("pulsar.redeliveryDelay", redeliveryDelay);
      Require.present("pulsar.initialPosition", initialPosition);
      Require.between("pulsar.releaseInterval", releaseInterval, Duration.ofMillis(10), Duration.ofHours(1),
          "10 ms and 1 h");
      BrokerWait.check(BrokerWait.SETTING, startupWait);
      return new Settings(client == null ? serviceUrl : null, client, topic,
          subscription != null ? subscription : handler.group(), handler, consumers, receiverQueueSize,
          redeliveryDelay, initialPosition, releaseInterval, startupWait);
    }

    /**
     * Validates the settings and subscribes: {@code PulsarIdempotentConsumer.start(build())}.
     *
     * @throws IllegalArgumentException naming a missing or invalid setting and its value
     * @throws ConvergeException when Pulsar refuses the subscription
     */
    public PulsarIdempotentConsumer start() {
      return PulsarIdempotentConsumer.start(build());
    }

    /** One attempt: the client (when owned) and every consumer, all closed again when one of them fails. */
    private static PulsarIdempotentConsumer subscribe(Settings settings) throws Exception {
      PulsarClient client = settings.client();
      String topic = settings.topic();
      String sub = settings.subscription();
      int consumers = settings.consumers();
      PulsarClient owned = null;
      List<Consumer<byte[]>> started = new ArrayList<>();
      InFlightHandlers inFlight = new InFlightHandlers();
      List<String> names;
      try {
        if (client == null) {
          owned = PulsarClient.builder().serviceUrl(settings.serviceUrl()).listenerThreads(consumers).build();
        }
        PulsarClient c = client == null ? owned : client;
        for (int i = 0; i < consumers; i++) {
          ConsumerBuilder<byte[]> b = c.newConsumer()
              .topic(topic)
              .subscriptionName(sub)
              .subscriptionType(SubscriptionType.Key_Shared)
              .subscriptionInitialPosition(settings.initialPosition())
              .negativeAckRedeliveryDelay(settings.redeliveryDelay().toMillis(), TimeUnit.MILLISECONDS)
              .receiverQueueSize(settings.receiverQueueSize())
              .messageListener(new Listener(settings.handler(), inFlight));
          started.add(subscribeOne(b, settings.startupWait()));
        }
        names = topicNames(c, topic);
      } catch (Exception e) {
        new PulsarIdempotentConsumer(owned, started, sub, inFlight, null).close();
        if (PulsarErrors.isStartupOutage(e)) {
          throw e; // the start-up wait tries again
        }
        if (e instanceof RuntimeException r) {
          throw r;
        }
        throw new ConvergeException("Cannot subscribe " + sub + " to Pulsar topic " + topic + ": " + e.getMessage(), e);
      }
      log.debug("Pulsar consumer {} started on {} ({} consumers)", sub, names, consumers);
      return new PulsarIdempotentConsumer(owned, started, sub, inFlight,
          HeldReleaser.start(settings.handler(), names, settings.releaseInterval()));
    }

    /**
     * Subscribes one consumer; with a start-up wait, one attempt waits at most {@link #ATTEMPT} (a frozen broker
     * would otherwise hold it for the client's operation timeout, 30 s), and a consumer that subscribes after
     * that is closed.
     */
    private static Consumer<byte[]> subscribeOne(ConsumerBuilder<byte[]> b, Duration startupWait) throws Exception {
      if (startupWait.isZero()) {
        return b.subscribe();
      }
      CompletableFuture<Consumer<byte[]>> subscribing = b.subscribeAsync();
      long ms = Math.min(ATTEMPT.toMillis(), Math.max(startupWait.toMillis(), 1000));
      try {
        return subscribing.get(ms, TimeUnit.MILLISECONDS);
      } catch (TimeoutException | InterruptedException e) {
        subscribing.thenAccept(Consumer::closeAsync);
        throw e;
      } catch (ExecutionException e) {
        throw PulsarClientException.unwrap(e.getCause());
      }
    }

    /**
     * The names the messages of {@code topic} carry ({@code Message.getTopicName()}: fully qualified, one per
     * partition of a partitioned topic), which the held rows store: the release rounds run those only, the
     * group's other topics being other handlers' (issue 31.4). A topic partitioned further while this consumer
     * runs has its new partitions' held messages released after a restart.
     */
    private static List<String> topicNames(PulsarClient client, String topic) {
      try {
        return client.getPartitionsForTopic(topic, false).get(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ConvergeException("Interrupted while reading the partitions of Pulsar topic " + topic, e);
      } catch (ExecutionException | TimeoutException e) {
        throw new ConvergeException("Cannot read the partitions of Pulsar topic " + topic, e);
      }
    }
  }
}
