package io.converge.saga.spring;

import io.converge.consumer.ConsumerMetrics;
import io.converge.consumer.spi.ConsumerBinding;
import io.converge.consumer.spring.PurgeScheduler;
import io.converge.consumer.spring.ConsumerProperties;
import io.converge.consumer.spring.RocketMQConsumerBinding;
import io.converge.core.Migrations;
import io.converge.producer.TxnProducer;
import io.converge.saga.SagaCoordinator;
import io.converge.saga.SagaCoordinatorBuilder;
import io.converge.saga.SagaDefinition;
import io.converge.saga.SagaMetrics;
import io.converge.saga.SagaOps;
import io.converge.saga.SagaPurger;
import io.converge.saga.SagaBranchPurger;
import io.converge.saga.SagaBranchRetention;
import io.converge.saga.SagaParticipant;
import io.converge.saga.TccDefinition;
import io.converge.saga.tcc.TccBarrierPurger;
import io.converge.saga.tcc.TccParticipant;
import io.converge.saga.tcc.TccRetention;
import io.converge.saga.micrometer.MicrometerSagaMetrics;
import io.converge.core.tracing.Tracing;
import java.time.Clock;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.util.ClassUtils;

/**
 * Spring Boot auto-configuration of converge-saga: {@link SagaOps}, the saga tables (only in a service with a saga
 * definition or a participant), a {@link SagaCoordinator} for
 * the application's {@link SagaDefinition} and {@link TccDefinition} beans (on its {@link TxnProducer}, {@code converge.saga.*}, Micrometer
 * meters when a registry is present), its reply consumer and polling, and the consumers of every
 * {@link SagaParticipant} and {@link TccParticipant} bean (the barrier's migration, and its purge of finished
 * branches on {@code converge.saga.tcc.*}, with a TCC participant; the saga participants' rows purged on
 * {@code converge.saga.branch-retention}) ({@code converge.saga.participants.<name>.*}), through the application's
 * {@link ConsumerBinding} (RocketMQ on {@code converge.consumer.rocketmq.*} when it defines none). Every bean backs
 * off when the application defines its own.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "io.converge.producer.spring.ConvergeProducerAutoConfiguration",
    "io.converge.consumer.spring.ConvergeConsumerAutoConfiguration",
    "io.converge.outbox.spring.OutboxAutoConfiguration",
    "io.converge.pulsar.spring.PulsarAutoConfiguration",
    "io.converge.pulsar.spring.PulsarOutboxAutoConfiguration"})
@ConditionalOnBean(DataSource.class)
@ConditionalOnProperty(prefix = "converge.saga", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(SagaProperties.class)
class ConvergeSagaAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  SagaOps convergeSagaOps(DataSource dataSource, SagaProperties properties) {
    return SagaOps.of(dataSource, Clock.systemUTC(), properties.participantRetention());
  }

  @Bean
  @ConditionalOnBean(TxnProducer.class)
  @Conditional(OnDefinitions.class)
  @ConditionalOnMissingBean
  SagaCoordinator convergeSagaCoordinator(TxnProducer producer, ObjectProvider<SagaDefinition<?>> definitions,
      ObjectProvider<TccDefinition<?>> tcc, SagaProperties properties, ApplicationContext context,
      DataSource dataSource, ObjectProvider<SagaParticipant> participants) {
    if (participants.orderedStream().findAny().isPresent()
        && properties.branchRetention().compareTo(properties.participantRetention()) < 0) {
      // one configuration read by both sides: the participants here would purge rows the coordinator still relies on
      throw new IllegalArgumentException("converge.saga.branch-retention must be at least"
          + " converge.saga.participant-retention (" + properties.participantRetention() + "), but was "
          + properties.branchRetention());
    }
    migrate(dataSource, properties);
    SagaCoordinatorBuilder b = SagaCoordinator.builder().producer(producer)
        .definitions(definitions.orderedStream().toArray(SagaDefinition<?>[]::new))
        .tcc(tcc.orderedStream().toArray(TccDefinition<?>[]::new))
        .replyTopic(properties.replyTopic()).pollInterval(properties.pollInterval()).batchSize(properties.batchSize())
        .compensationRate(properties.compensationRate().perSecond(), properties.compensationRate().burst())
        .metrics(MicrometerSupport.metrics(context))
        .participantRetention(properties.participantRetention()).retryWindow(properties.retryWindow())
        .tracing(context.getBeanProvider(Tracing.class).getIfAvailable(Tracing::global)); // the OpenTelemetry bean's
    if (properties.replyGroup() != null && !properties.replyGroup().isBlank()) {
      b.replyGroup(properties.replyGroup());
    }
    properties.participantRates().forEach((name, rate) -> b.compensationRate(name, rate.perSecond(), rate.burst()));
    return b.build();
  }

  /** The finished sagas purged, in the coordinator's service (converge.saga.retention, purge-interval). */
  @Bean
  @ConditionalOnBean(SagaCoordinator.class)
  @ConditionalOnMissingBean
  SagaPurger convergeSagaPurger(DataSource dataSource, SagaProperties properties) {
    return new SagaPurger(dataSource, properties.retention(), SagaPurger.DEFAULT_BATCH_SIZE);
  }

  @Bean
  @ConditionalOnBean(SagaPurger.class)
  @ConditionalOnMissingBean(name = "convergeSagaPurgeScheduler")
  PurgeScheduler convergeSagaPurgeScheduler(SagaPurger purger, SagaProperties properties) {
    return new PurgeScheduler("converge-saga-purge", purger::purgeExpired, properties.purgeInterval(),
        "converge.saga.purge-interval");
  }

  /**
   * The saga participants' barrier rows purged, in a service with a {@link SagaParticipant}
   * (converge.saga.branch-retention, branch-purge-interval).
   */
  @Bean
  @ConditionalOnBean(SagaParticipant.class)
  @ConditionalOnMissingBean
  SagaBranchPurger convergeSagaBranchPurger(DataSource dataSource, SagaProperties properties) {
    return new SagaBranchPurger(dataSource, new SagaBranchRetention(properties.branchRetention()),
        SagaBranchPurger.DEFAULT_BATCH_SIZE);
  }

  @Bean
  @ConditionalOnBean(SagaBranchPurger.class)
  @ConditionalOnMissingBean(name = "convergeSagaBranchPurgeScheduler")
  PurgeScheduler convergeSagaBranchPurgeScheduler(SagaBranchPurger purger, SagaProperties properties) {
    return new PurgeScheduler("converge-saga-branch-purge", purger::purgeExpired, properties.branchPurgeInterval(),
        "converge.saga.branch-purge-interval");
  }

  /** The barrier's finished branches purged, in a service with a TCC participant. */
  @Bean
  @ConditionalOnBean(TccParticipant.class)
  @ConditionalOnMissingBean
  TccBarrierPurger convergeTccBarrierPurger(DataSource dataSource, SagaProperties properties) {
    return new TccBarrierPurger(dataSource, TccRetention.of(properties.tcc().retention()),
        TccBarrierPurger.DEFAULT_BATCH_SIZE);
  }

  @Bean
  @ConditionalOnBean(TccBarrierPurger.class)
  @ConditionalOnMissingBean(name = "convergeTccPurgeScheduler")
  PurgeScheduler convergeTccPurgeScheduler(TccBarrierPurger purger, SagaProperties properties) {
    return new PurgeScheduler("converge-tcc-barrier-purge", purger::purgeExpired, properties.tcc().purgeInterval(),
        "converge.saga.tcc.purge-interval");
  }

  @Bean
  SagaSubscriptions convergeSagaSubscriptions(ObjectProvider<SagaCoordinator> coordinator,
      ObjectProvider<SagaParticipant> participants, ObjectProvider<TccParticipant> tccParticipants,
      SagaProperties properties, ObjectProvider<ConsumerBinding> binding,
      ObjectProvider<ConsumerProperties> consumerProperties, ObjectProvider<ConsumerMetrics> consumerMetrics,
      DataSource dataSource) {
    SagaCoordinator c = coordinator.getIfUnique();
    List<SagaParticipant> ps = participants.orderedStream().toList();
    List<TccParticipant> tcc = tccParticipants.orderedStream().toList();
    if (!ps.isEmpty()) {
      migrate(dataSource, properties); // the participants' stored replies (converge_saga_branch)
    }
    if (!tcc.isEmpty() && properties.migrate()) {
      Migrations.apply(dataSource, "tcc"); // the TCC participants' barrier
    }
    ConsumerBinding own = binding.getIfUnique();
    ConsumerBinding chosen = own;
    if (own == null && (c != null || !ps.isEmpty() || !tcc.isEmpty())) {
      ConsumerProperties consumer = consumerProperties.getIfAvailable();
      if (consumer == null) {
        throw new IllegalStateException("The saga consumers need a ConsumerBinding bean or consumer-idem's"
            + " auto-configuration (converge.consumer.enabled=true, converge.consumer.rocketmq.name-server)");
      }
      chosen = RocketMQConsumerBinding.orDefault(null, consumer);
    }
    return new SagaSubscriptions(c, properties.replyTopic(), ps, tcc, properties, chosen,
        consumerMetrics.getIfUnique(() -> ConsumerMetrics.NONE));
  }

  /** The application defines a saga or a TCC global transaction. */
  static final class OnDefinitions extends AnyNestedCondition {

    OnDefinitions() {
      super(ConfigurationPhase.REGISTER_BEAN);
    }

    @ConditionalOnBean(SagaDefinition.class)
    static final class Saga {
    }

    @ConditionalOnBean(TccDefinition.class)
    static final class Tcc {
    }
  }

  /** A service with neither a saga nor a participant (a starter user) gets no saga tables. */
  private static void migrate(DataSource dataSource, SagaProperties properties) {
    if (properties.migrate()) {
      Migrations.apply(dataSource, "saga");
    }
  }

  /** Keeps Micrometer types out of the configuration class, so that it loads without Micrometer. */
  static final class MicrometerSupport {

    private MicrometerSupport() {
    }

    static SagaMetrics metrics(ApplicationContext context) {
      if (!ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry",
          ConvergeSagaAutoConfiguration.class.getClassLoader())) {
        return SagaMetrics.NONE;
      }
      return Registry.metrics(context);
    }
  }

  /** Loaded only when Micrometer is present. */
  static final class Registry {

    private Registry() {
    }

    static SagaMetrics metrics(ApplicationContext context) {
      io.micrometer.core.instrument.MeterRegistry registry = context
          .getBeanProvider(io.micrometer.core.instrument.MeterRegistry.class).getIfUnique();
      return registry == null ? SagaMetrics.NONE : MicrometerSagaMetrics.of(registry);
    }
  }
}
