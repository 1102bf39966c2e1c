package io.converge.starter;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.outbox.spi.OutboxSink;
import io.converge.core.ConvergeException;
import io.converge.producer.spring.TransactionalPublisher;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The starter's start-up check on this module's test classpath, which has neither
 * {@code rocketmq-client} nor {@code converge-pulsar-adapter}: a mode whose client is missing fails the
 * start naming the artifact and its version, before the service's own beans are made.
 */
class ProducerModeCheckTest {

  /** The starter's auto-configurations and the modules' ones, and a service that needs the publisher. */
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(autoConfigurations()))
      .withUserConfiguration(OrderService.class);

  @Test
  void rocketmqModeWithoutTheClientNamesIt() throws Exception {
    startFailure("converge.producer.mode=rocketmq")
        .hasMessage("converge.producer.mode=rocketmq needs org.apache.rocketmq:rocketmq-client on the classpath "
            + "(add it as a dependency, version " + version("rocketmq") + ")");
  }

  @Test
  void pulsarModeWithoutTheAdapterNamesIt() throws Exception {
    startFailure("converge.producer.mode=PULSAR")
        .hasMessage("converge.producer.mode=pulsar needs io.converge:converge-pulsar-adapter on the classpath "
            + "(add it as a dependency, version " + version("converge") + ")");
  }

  @Test
  void outboxModeWithTheDefaultSinkNeedsTheRocketMQClient() {
    startFailure("converge.producer.mode=outbox")
        .hasMessageStartingWith("converge.producer.mode=outbox with converge.outbox.sink=rocketmq (the relay's "
            + "default sink) needs org.apache.rocketmq:rocketmq-client on the classpath");
  }

  @Test
  void outboxModeWithThePulsarSinkNeedsTheAdapter() {
    startFailure("converge.producer.mode=outbox", "converge.outbox.sink=pulsar")
        .hasMessageContaining("needs io.converge:converge-pulsar-adapter on the classpath");
  }

  @Test
  void anUnknownModeIsRefusedWithTheValidOnes() {
    startFailure("converge.producer.mode=kafka")
        .hasMessage("converge.producer.mode must be rocketmq, pulsar or outbox, but was kafka");
  }

  /** Asserts that the start with {@code properties} failed with a {@link ConvergeException}; that failure. */
  private AbstractThrowableAssert<?, ? extends Throwable> startFailure(String... properties) {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    runner.withPropertyValues(properties).run(context -> {
      assertThat(context).hasFailed();
      failure.set(context.getStartupFailure());
    });
    return assertThat(failure.get()).isInstanceOf(ConvergeException.class);
  }

  @Test
  void outboxModeNeedsNoClientWhenTheServiceHasNoRelayOrItsOwnSink() {
    // no DataSource here: the producer's beans back off, and the start gets past the check
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(autoConfigurations()))
        .withPropertyValues("converge.producer.mode=outbox", "converge.outbox.relay-enabled=false")
        .run(context -> assertThat(context).hasNotFailed());
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(autoConfigurations()))
        .withUserConfiguration(OwnSink.class)
        .withPropertyValues("converge.producer.mode=outbox")
        .run(context -> assertThat(context).hasNotFailed().hasSingleBean(OutboxSink.class));
  }

  @Test
  void withoutAModeNothingIsChecked() {
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(autoConfigurations()))
        .run(context -> assertThat(context).hasNotFailed());
  }

  private static Class<?>[] autoConfigurations() {
    return Arrays.stream(new String[]{"io.converge.starter.ConvergeStarterAutoConfiguration",
        "io.converge.producer.spring.ConvergeProducerAutoConfiguration",
        "io.converge.outbox.spring.OutboxAutoConfiguration",
        "io.converge.consumer.spring.ConvergeConsumerAutoConfiguration"}).map(ProducerModeCheckTest::load)
        .toArray(Class<?>[]::new);
  }

  private static Class<?> load(String name) {
    try {
      return Class.forName(name);
    } catch (ClassNotFoundException e) {
      throw new AssertionError(name + " is not on the starter's classpath", e);
    }
  }

  private static String version(String name) throws Exception {
    java.util.Properties p = new java.util.Properties();
    try (var in = ProducerModeCheck.class.getResourceAsStream("versions.properties")) {
      p.load(in);
    }
    assertThat(p.getProperty(name)).as("filtered version of %s", name).doesNotContain("${").isNotBlank();
    return p.getProperty(name);
  }

  @Configuration(proxyBeanMethods = false)
  static class OrderService {

    @Bean
    String orderService(TransactionalPublisher publisher) {
      return "needs " + publisher;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnSink {

    @Bean
    OutboxSink ownSink() {
      return new OutboxSink() {

        @Override
        public String name() {
          return "own";
        }

        @Override
        public void send(io.converge.outbox.spi.OutboxRecord record) {
        }

        @Override
        public void close() {
        }
      };
    }
  }
}
