package io.converge.saga.spring;

import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.spi.ConsumerBinding;
import io.converge.consumer.spi.ForwardingIdempotentHandler;
import io.converge.saga.SagaCoordinator;
import io.converge.saga.SagaParticipant;
import io.converge.saga.tcc.TccParticipant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the saga coordinator's reply consumer and its polling, and each {@link SagaParticipant} and
 * {@link TccParticipant} bean's command and compensation (and a TCC participant's confirm) consumers, when the context starts; stops them first when it closes. Every subscription goes through
 * the application's consumer binding (RocketMQ on {@code converge.consumer.rocketmq.*} when it defines none), and
 * every delivery's outcome is counted in the application's {@link ConsumerMetrics} ({@code consumer.duplicates},
 * {@code consumer.processed}, ...), as an {@code @IdempotentConsumer} method's is.
 */
final class SagaSubscriptions implements SmartLifecycle {

  private static final Logger log = LoggerFactory.getLogger(SagaSubscriptions.class);

  private final SagaCoordinator coordinator;
  private final String replyTopic;
  private final List<SagaParticipant> participants;
  private final List<TccParticipant> tccParticipants;
  private final SagaProperties properties;
  private final ConsumerBinding binding;
  private final ConsumerMetrics metrics;
  private final List<ConsumerBinding.Subscription> running = new ArrayList<>();
  private volatile boolean started;

  /**
   * @param coordinator null when the application defines no saga
   * @param replyTopic the coordinator's reply topic
   * @param metrics where the deliveries' outcomes are counted
   */
  SagaSubscriptions(SagaCoordinator coordinator, String replyTopic, List<SagaParticipant> participants,
      List<TccParticipant> tccParticipants, SagaProperties properties, ConsumerBinding binding,
      ConsumerMetrics metrics) {
    this.metrics = metrics;
    this.coordinator = coordinator;
    this.replyTopic = replyTopic;
    this.participants = List.copyOf(participants);
    this.tccParticipants = List.copyOf(tccParticipants);
    this.properties = properties;
    this.binding = binding;
  }

  @Override
  public synchronized void start() {
    try {
      for (SagaParticipant participant : participants) {
        subscribe("SagaParticipant", participant.name(), participant::handler);
      }
      for (TccParticipant participant : tccParticipants) {
        subscribe("TccParticipant", participant.name(), participant::handler);
      }
      if (coordinator != null) {
        subscribe(replyTopic, coordinator.replyHandler());
        coordinator.startPolling();
      }
    } catch (RuntimeException e) {
      stop();
      throw e;
    }
    started = true;
  }

  /** Subscribes participant {@code name}'s topics, each with a handler of its own group. */
  private void subscribe(String kind, String name, Function<String, IdempotentHandler> handler) {
    SagaProperties.Participant where = properties.participants().get(name);
    if (where == null || blank(where.commandTopic())) {
      throw new IllegalStateException("converge.saga.participants." + name + ".command-topic must be set for the "
          + kind + " bean named " + name + ", but was " + (where == null ? null : where.commandTopic()));
    }
    String group = blank(where.group()) ? name : where.group();
    subscribe(where.commandTopic(), handler.apply(group));
    if (!blank(where.compensationTopic())) {
      subscribe(where.compensationTopic(), handler.apply(group + "-compensation"));
    }
    if (!blank(where.confirmTopic())) {
      subscribe(where.confirmTopic(), handler.apply(group + "-confirm"));
    }
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }

  private void subscribe(String topic, IdempotentHandler handler) {
    try {
      running.add(binding.subscribe(topic, metrics == ConsumerMetrics.NONE ? handler : new Counted(handler, metrics)));
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("The saga consumer of " + topic + " (group " + handler.group()
          + ") cannot subscribe", e);
    }
    log.info("Saga consumer subscribed to {} as group {}", topic, handler.group());
  }

  @Override
  public synchronized void stop() {
    for (ConsumerBinding.Subscription s : running) {
      s.close();
    }
    running.clear();
    if (coordinator != null) {
      coordinator.close();
    }
    started = false;
  }

  @Override
  public boolean isRunning() {
    return started;
  }

  @Override
  public int getPhase() {
    return Integer.MAX_VALUE - 100; // as @IdempotentConsumer methods: after what the handlers use, stopped before it
  }

  /** A handler whose deliveries' outcomes are counted (the handlers of converge-saga are built without metrics). */
  private static final class Counted extends ForwardingIdempotentHandler {

    private final ConsumerMetrics metrics;

    Counted(IdempotentHandler handler, ConsumerMetrics metrics) {
      super(handler);
      this.metrics = metrics;
    }

    @Override
    public Outcome handle(IncomingMessage message) {
      Outcome outcome = delegate().handle(message);
      metrics.outcome(group(), message.topic(), outcome);
      return outcome;
    }
  }
}
