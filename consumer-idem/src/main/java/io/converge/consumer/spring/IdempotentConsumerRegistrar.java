package io.converge.consumer.spring;

import io.converge.core.SigningKeys;
import io.converge.core.tracing.Tracing;
import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.IdempotentConsumer;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageHandler;
import io.converge.consumer.TransactionRunner;
import io.converge.consumer.spi.ConsumerBinding;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.ApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Finds the {@link IdempotentConsumer} methods of the context's beans when the context starts and
 * subscribes each through an {@link IdempotentHandler} and the application's {@link ConsumerBinding}
 * (a RocketMQ push consumer when there is none); stops them first when the context closes.
 */
final class IdempotentConsumerRegistrar implements SmartLifecycle {

  private static final Logger log = LoggerFactory.getLogger(IdempotentConsumerRegistrar.class);

  private final ApplicationContext context;
  private final ConsumerProperties properties;
  private final TransactionRunner transactions;
  private final ConsumerMetrics metrics;
  private final ConsumerBinding binding;
  private final List<ConsumerBinding.Subscription> running = new ArrayList<>();
  private volatile boolean started;

  IdempotentConsumerRegistrar(ApplicationContext context, ConsumerProperties properties, TransactionRunner transactions,
      ConsumerMetrics metrics, ConsumerBinding binding) {
    this.context = context;
    this.binding = RocketMQConsumerBinding.orDefault(binding, properties);
    this.properties = properties;
    this.transactions = transactions;
    this.metrics = metrics;
  }

  @Override
  public synchronized void start() {
    for (String name : context.getBeanDefinitionNames()) {
      Class<?> type = context.getType(name, false);
      if (type == null) {
        continue;
      }
      Class<?> user = ClassUtils.getUserClass(type);
      ReflectionUtils.doWithMethods(user, method -> subscribe(name, method),
          method -> method.isAnnotationPresent(IdempotentConsumer.class));
    }
    started = true;
  }

  private void subscribe(String beanName, Method method) {
    IdempotentConsumer annotation = method.getAnnotation(IdempotentConsumer.class);
    String where = beanName + "." + method.getName();
    Class<?>[] params = method.getParameterTypes();
    boolean withConnection = params.length == 2 && params[0] == Connection.class && params[1] == IncomingMessage.class;
    if (!withConnection && !(params.length == 1 && params[0] == IncomingMessage.class)) {
      throw new IllegalStateException("@IdempotentConsumer method " + where
          + " must take (java.sql.Connection, IncomingMessage) or (IncomingMessage), but takes " + List.of(params));
    }
    Object bean = context.getBean(beanName);
    Method target = AopUtils.selectInvocableMethod(method, bean.getClass());
    ReflectionUtils.makeAccessible(target);
    MessageHandler handler = (c, m) -> {
      try {
        if (withConnection) {
          target.invoke(bean, c, m);
        } else {
          target.invoke(bean, m);
        }
      } catch (InvocationTargetException e) {
        // the classifier must see the handler's own exception
        Throwable cause = e.getCause();
        if (cause instanceof Exception ex) {
          throw ex;
        }
        throw (Error) cause;
      }
    };
    String topic = context.getEnvironment().resolveRequiredPlaceholders(annotation.topic());
    String group = context.getEnvironment().resolveRequiredPlaceholders(annotation.group());
    IdempotentHandler idempotent = properties.applyEnvelopeRules(IdempotentHandler.builder().group(group)
        .handler(handler).transactions(transactions).policy(properties.policy(annotation.policy())).metrics(metrics)
        .tracing(context.getBeanProvider(Tracing.class).getIfAvailable(Tracing::global))
        .traceAsParent(annotation.traceAsParent()),
        context.getBeanProvider(SigningKeys.class).getIfAvailable()).build();
    try {
      running.add(binding.subscribe(topic, idempotent));
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("@IdempotentConsumer " + where + " cannot subscribe to " + topic, e);
    }
    log.info("@IdempotentConsumer {} subscribed to {} as group {} (policy {})", where, topic, group,
        annotation.policy());
  }

  @Override
  public synchronized void stop() {
    for (ConsumerBinding.Subscription c : running) {
      c.close();
    }
    running.clear();
    started = false;
  }

  @Override
  public boolean isRunning() {
    return started;
  }

  @Override
  public int getPhase() {
    return Integer.MAX_VALUE - 100; // start after everything the handlers use, stop before it
  }
}
