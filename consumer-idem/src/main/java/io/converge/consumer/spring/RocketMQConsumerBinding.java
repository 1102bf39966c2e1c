package io.converge.consumer.spring;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.consumer.spi.ConsumerBinding;
import java.util.Objects;

/**
 * The consumer binding used when the application defines no {@link ConsumerBinding} bean: a RocketMQ push consumer
 * per subscription, on {@code converge.consumer.rocketmq.*}. Used by {@code @IdempotentConsumer} methods and by other
 * modules' Spring bindings (the saga coordinator's replies and participants), so that every subscription of an
 * application goes the same way. Thread-safe.
 */
public final class RocketMQConsumerBinding implements ConsumerBinding {

  private final ConsumerProperties.Rocketmq settings;

  /** A binding on {@code settings} ({@code converge.consumer.rocketmq.*}). */
  public RocketMQConsumerBinding(ConsumerProperties.Rocketmq settings) {
    this.settings = Objects.requireNonNull(settings, "settings");
  }

  /**
   * The application's binding when it defines exactly one, otherwise RocketMQ on {@code properties}.
   *
   * @param own the application's {@link ConsumerBinding} bean; null when it has none (or several)
   */
  public static ConsumerBinding orDefault(ConsumerBinding own, ConsumerProperties properties) {
    return own != null ? own : new RocketMQConsumerBinding(properties.rocketmq());
  }

  /**
   * Starts a push consumer of {@code topic} for {@code handler}.
   *
   * @throws IllegalStateException when {@code converge.consumer.rocketmq.name-server} is not set
   */
  @Override
  public Subscription subscribe(String topic, IdempotentHandler handler) {
    String nameServer = settings.nameServer();
    if (nameServer == null || nameServer.isBlank()) {
      throw new IllegalStateException("converge.consumer.rocketmq.name-server must be set to consume " + topic
          + " (or define a ConsumerBinding bean), but was " + nameServer);
    }
    RocketMQIdempotentConsumer consumer = RocketMQIdempotentConsumer.builder().nameServer(nameServer).topic(topic)
        .handler(handler).consumeThreads(settings.consumeThreads()).consumeTimeout(settings.consumeTimeout())
        .ordered(settings.ordered()).suspendTime(settings.suspendTime()).releaseInterval(settings.releaseInterval())
        .start();
    return consumer::close;
  }
}
