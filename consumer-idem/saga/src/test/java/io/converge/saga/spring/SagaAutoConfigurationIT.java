package io.converge.saga.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.consumer.spring.PurgeScheduler;
import io.converge.core.Migrations;
import io.converge.producer.TxnProducer;
import io.converge.producer.rocketmq.RocketMQBackend;
import io.converge.saga.SagaCodec;
import io.converge.saga.SagaCoordinator;
import io.converge.saga.SagaDefinition;
import io.converge.saga.SagaOps;
import io.converge.saga.SagaParticipant;
import io.converge.saga.SagaState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * What {@code converge.saga.*} wires in a Spring Boot application, on the embedded RocketMQ and PostgreSQL: the
 * application's {@link SagaDefinition} and {@link SagaParticipant} beans become a polling coordinator whose replies,
 * and a participant whose commands, are consumed through the consumer binding (RocketMQ here), so a saga started
 * through the coordinator bean completes; without a definition or a participant there is no coordinator and no saga table; a participant whose topics
 * are not configured fails the start-up naming the property.
 */
@ExtendWith(RocketMQExtension.class)
class SagaAutoConfigurationIT {

  private static ApplicationContextRunner runner(DataSource ds) throws ClassNotFoundException {
    // consumer-idem's (package-private) auto-configuration: the consumer properties and the RocketMQ binding
    Class<?> consumer = Class.forName("io.converge.consumer.spring.ConvergeConsumerAutoConfiguration");
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(consumer, ConvergeSagaAutoConfiguration.class))
        .withBean(DataSource.class, () -> ds);
  }

  @Test
  void theApplicationsDefinitionsAndParticipantsBecomeARunningCoordinatorAndConsumers(EmbeddedRocketMQ mq)
      throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("saga_spring");
    for (String module : List.of("producer", "consumer")) {
      Migrations.apply(ds, module);
    }
    String prefix = RocketMQExtension.uniqueTopic("ss") + "-";
    List<String> topics = List.of(prefix + "replies", prefix + "account-cmd", prefix + "account-comp");
    topics.forEach(mq::createTopic);
    SagaDefinition<String> order = SagaDefinition.builder("order", SagaCodec.json())
        .remote("debit", s -> s.participant("account").command(prefix + "account-cmd", SagaCodec::utf8)
            .compensation(prefix + "account-comp", SagaCodec::utf8))
        .build();
    try (TxnProducer producer = TxnProducer.builder().group(prefix + "p").dataSource(ds)
        .backend(RocketMQBackend.nameServer(mq.nameServerAddress())).topics(topics.toArray(String[]::new)).build()) {
      SagaParticipant account = SagaParticipant.builder("account").producer(producer)
          .step("debit", (c, m) -> "{\"debited\":5}".getBytes(StandardCharsets.UTF_8))
          .compensation("debit", (c, m) -> new byte[0]).build();
      runner(ds).withBean(TxnProducer.class, () -> producer).withBean("order", SagaDefinition.class, () -> order)
          .withBean(SagaParticipant.class, () -> account)
          .withPropertyValues("converge.consumer.rocketmq.name-server=" + mq.nameServerAddress(),
              "converge.saga.reply-topic=" + prefix + "replies", "converge.saga.reply-group=" + prefix + "coordinator",
              "converge.saga.poll-interval=200ms", "converge.saga.retention=2d",
              "converge.saga.purge-interval=30s", "converge.saga.branch-retention=10d",
              "converge.saga.branch-purge-interval=45s", "converge.saga.participant-retention=10d",
              "converge.saga.participants.account.command-topic=" + prefix + "account-cmd",
              "converge.saga.participants.account.compensation-topic=" + prefix + "account-comp",
              "converge.saga.participants.account.group=" + prefix + "account")
          .run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(SagaCoordinator.class).hasSingleBean(SagaOps.class);
            assertThat(context.getBean(SagaCoordinator.class).start(order, "o-1", "{\"amount\":5}")).isTrue();
            SagaOps ops = context.getBean(SagaOps.class);
            await().atMost(Duration.ofSeconds(60)).until(() -> ops.show("o-1").orElseThrow().saga().state(),
                SagaState.COMPLETED::equals);
            assertThat(ops.show("o-1").orElseThrow().events()).extracting(SagaOps.Event::kind)
                .containsSubsequence("STARTED", "SENT", "REPLIED", "COMPLETED");
            // finished sagas are purged on the shared schedule, on converge.saga.retention / purge-interval
            assertThat(context.getBean(io.converge.saga.SagaPurger.class).retention())
                .isEqualTo(Duration.ofDays(2));
            PurgeScheduler purge = context.getBean("convergeSagaPurgeScheduler", PurgeScheduler.class);
            assertThat(purge.isRunning()).isTrue();
            assertThat(purge.name()).isEqualTo("converge-saga-purge");
            assertThat(purge.interval()).isEqualTo(Duration.ofSeconds(30));
            // the participant's barrier rows too, on converge.saga.branch-retention / branch-purge-interval
            assertThat(context.getBean(io.converge.saga.SagaBranchPurger.class).retention().retention())
                .isEqualTo(Duration.ofDays(10));
            PurgeScheduler branches = context.getBean("convergeSagaBranchPurgeScheduler", PurgeScheduler.class);
            assertThat(branches.isRunning()).isTrue();
            assertThat(branches.name()).isEqualTo("converge-saga-branch-purge");
            assertThat(branches.interval()).isEqualTo(Duration.ofSeconds(45));
          });
      // one configuration read by both sides: participants that keep their rows shorter than the coordinator assumes
      runner(ds).withBean(TxnProducer.class, () -> producer).withBean("order", SagaDefinition.class, () -> order)
          .withBean(SagaParticipant.class, () -> account)
          .withPropertyValues("converge.saga.reply-topic=" + prefix + "replies",
              "converge.saga.branch-retention=8d", "converge.saga.participant-retention=10d")
          .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
              .isInstanceOf(IllegalArgumentException.class)
              .hasMessage("converge.saga.branch-retention must be at least converge.saga.participant-retention"
                  + " (PT240H), but was PT192H"));
    }
  }

  /**
   * A service with only a TCC global transaction and a TCC participant: the coordinator drives it and the
   * participant's Try and Confirm topics are subscribed with groups of their own, through the application's binding
   * (here one that records the subscriptions: what is wired, not how a broker delivers, which the test above proves).
   */
  @Test
  void aTccDefinitionAloneGetsACoordinatorAndATccParticipantItsConsumers() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("saga_spring_tcc");
    for (String module : List.of("producer", "outbox", "consumer")) {
      Migrations.apply(ds, module);
    }
    List<String> subscribed = new java.util.concurrent.CopyOnWriteArrayList<>();
    io.converge.consumer.spi.ConsumerBinding recording = (topic, handler) -> {
      subscribed.add(topic + " " + handler.group());
      return () -> subscribed.add("closed " + topic);
    };
    io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter exporter = io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter
        .create();
    io.opentelemetry.sdk.OpenTelemetrySdk sdk = io.opentelemetry.sdk.OpenTelemetrySdk.builder().setTracerProvider(
        io.opentelemetry.sdk.trace.SdkTracerProvider.builder().addSpanProcessor(
            io.opentelemetry.sdk.trace.export.SimpleSpanProcessor.create(exporter)).build())
        .build();
    try (TxnProducer producer = TxnProducer.builder().group("tcc-spring").dataSource(ds)
        .backend(io.converge.outbox.OutboxBackend.outbox()).build()) {
      io.converge.saga.TccDefinition<String> transfer = io.converge.saga.TccDefinition
          .builder("transfer", SagaCodec.json()).branch("points", b -> b.messages("points-tcc")
              .confirmTopic("points-confirm"))
          .build();
      io.converge.saga.tcc.TccParticipant points = io.converge.saga.tcc.TccParticipant.builder("points")
          .producer(producer).branch("points", (c, m) -> null, (c, m) -> null, (c, m) -> null).build();
      runner(ds).withBean(TxnProducer.class, () -> producer)
          .withBean("transfer", io.converge.saga.TccDefinition.class, () -> transfer)
          .withBean(io.converge.saga.tcc.TccParticipant.class, () -> points)
          .withBean(io.converge.consumer.spi.ConsumerBinding.class, () -> recording)
          .withBean(io.converge.core.tracing.Tracing.class, () -> io.converge.core.tracing.OpenTelemetryTracing.of(sdk))
          .withPropertyValues("converge.saga.reply-topic=tcc-replies", "converge.saga.reply-group=tcc-coordinator",
              "converge.saga.participants.points.command-topic=points-tcc",
              "converge.saga.participants.points.confirm-topic=points-confirm",
              "converge.saga.tcc.purge-interval=5m")
          .run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(SagaCoordinator.class);
            assertThat(context.getBean(SagaCoordinator.class).start(transfer, "t-1", "{}")).isTrue();
            assertThat(subscribed).containsExactly("points-tcc points", "points-confirm points-confirm",
                "tcc-replies tcc-coordinator");
            assertThat(new org.springframework.jdbc.core.JdbcTemplate(ds).queryForObject(
                "SELECT count(*) FROM converge_tcc_barrier", Long.class)).as("the barrier's table").isZero();
            // the barrier's finished branches are purged on a schedule
            PurgeScheduler purge = context.getBean("convergeTccPurgeScheduler", PurgeScheduler.class);
            assertThat(purge.isRunning()).isTrue();
            assertThat(purge.name()).isEqualTo("converge-tcc-barrier-purge");
            assertThat(purge.interval()).isEqualTo(java.time.Duration.ofMinutes(5));
            assertThat(context.getBean(io.converge.saga.tcc.TccBarrierPurger.class).retention().retention())
                .isEqualTo(java.time.Duration.ofDays(7));
            assertThat(context.getBean(io.converge.saga.SagaPurger.class).retention())
                .as("the coordinator's finished sagas too, by default").isEqualTo(Duration.ofDays(7));
            assertThat(context).as("no SagaParticipant: no saga branch purge").doesNotHaveBean(
                io.converge.saga.SagaBranchPurger.class);
            // the coordinator's reply handler traces with the application's Tracing bean (issue 34)
            context.getBean(SagaCoordinator.class).replyHandler().handle(io.converge.consumer.IncomingMessage.builder()
                .topic("tcc-replies").header(io.converge.core.Envelope.MESSAGE_ID, "r-1").payload("{}").build());
            assertThat(exporter.getFinishedSpanItems()).extracting(s -> s.getName()).contains("process tcc-replies");
          });
    } finally {
      sdk.close();
    }
    assertThat(subscribed).as("closed with the context").contains("closed points-tcc", "closed tcc-replies");
  }

  @Test
  void withoutADefinitionThereIsNoCoordinatorAndAnUnconfiguredParticipantFailsTheStartUp() throws Exception {
    DataSource ds = ConvergePostgres.shared().newSchema("saga_spring_bad");
    for (String module : List.of("producer", "outbox", "consumer")) {
      Migrations.apply(ds, module);
    }
    runner(ds).run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean(SagaCoordinator.class).hasSingleBean(SagaOps.class);
      assertThat(new org.springframework.jdbc.core.JdbcTemplate(ds).queryForObject(
          "SELECT to_regclass('converge_saga') IS NULL", Boolean.class))
          .as("a service without sagas or participants gets no saga tables").isTrue();
    });
    SagaParticipant lost = SagaParticipant.builder("ledger")
        .producer(TxnProducer.builder().group("ledger").dataSource(ds)
            .backend(io.converge.outbox.OutboxBackend.outbox()).build())
        .step("debit", (c, m) -> new byte[0]).build();
    runner(ds).withBean(SagaParticipant.class, () -> lost)
        .withPropertyValues("converge.consumer.rocketmq.name-server=127.0.0.1:1")
        .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
            .hasMessageContaining("converge.saga.participants.ledger.command-topic must be set"));
  }
}
