package io.converge.examples.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.CompositeArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The module map of docs/architecture.md, checked on the main classes of every module on this module's class path
 * (core, producer-txn, consumer-idem, converge-saga, outbox-relay, pulsar-adapter, broker-embedded, the console and the
 * examples;
 * test classes are not imported). A rule names what it protects; a violation lists the offending dependencies.
 */
class ModuleBoundariesTest {

  /** The library modules' packages: what an adopter puts on a service's class path. */
  static final String[] LIBRARY = {"io.converge.core..", "io.converge.producer..", "io.converge.consumer..",
      "io.converge.outbox..", "io.converge.pulsar..", "io.converge.console..", "io.converge.saga.."};

  private static JavaClasses main;

  @BeforeAll
  static void importMainClasses() {
    main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("io.converge");
  }

  /** converge-core is the bottom of the graph: every library depends on it, it on none of them. */
  @Test
  void coreDependsOnNoOtherConvergeModule() {
    noClasses().that().resideInAPackage("io.converge.core..").should().dependOnClassesThat()
        .resideInAnyPackage("io.converge.producer..", "io.converge.consumer..", "io.converge.outbox..",
            "io.converge.pulsar..", "io.converge.console..", "io.converge.ops..", "io.converge.broker..",
            "io.converge.testing..", "io.converge.examples..", "io.converge.starter..", "io.converge.saga..")
        .because("converge-core is what every library module shares; it depends on none of them")
        .check(main);
  }

  /** A consumer needs no producer: consumer-idem is usable alone (its tests use the producer, its code never). */
  @Test
  void theConsumerDependsOnNoProducerBackend() {
    noClasses().that().resideInAPackage("io.converge.consumer..").should().dependOnClassesThat()
        .resideInAnyPackage("io.converge.producer..", "io.converge.outbox..", "io.converge.pulsar..",
            "io.converge.saga..")
        .because("consumer-idem depends on converge-core only")
        .check(main);
  }

  /**
   * The outbox is a {@code TxnProducer} backend: it uses the producer's API, SPI and Spring support, never the
   * producer's implementation nor the RocketMQ half-message backend.
   */
  @Test
  void theOutboxUsesTheProducerOnlyThroughItsApiAndSpi() {
    noClasses().that().resideInAPackage("io.converge.outbox..").should().dependOnClassesThat()
        .resideInAnyPackage("io.converge.producer.internal..", "io.converge.producer.rocketmq..")
        .because("outbox-relay is a backend of the producer's SPI, not a user of its internals")
        .check(main);
  }

  /**
   * The saga coordinator is made of Converge's own guarantees, used as an adopter uses them: the producer's API
   * ({@code TxnProducer}, so every backend works), the consumer's API ({@code IdempotentHandler}); no backend, no
   * implementation package of another module.
   */
  @Test
  void theSagaUsesTheProducerAndConsumerOnlyThroughTheirApis() {
    noClasses().that().resideInAPackage("io.converge.saga..").should().dependOnClassesThat()
        .resideInAnyPackage("io.converge.producer.internal..", "io.converge.producer.rocketmq..",
            "io.converge.producer.spi..", "io.converge.consumer.internal..", "io.converge.outbox..",
            "io.converge.pulsar..", "io.converge.console..")
        .because("converge-saga runs on any TxnProducer backend and any consumer transport")
        .check(main);
  }

  /**
   * Outside producer-txn, the producer is used through its API package, its SPI and Spring support, and the RocketMQ
   * backend's entry ({@code RocketMQBackend}); never its implementation. Two known uses beyond that: the Pulsar
   * backend (its crash points) and the ops tools may use the transaction log's classes ({@code TxnLog},
   * {@code CrashPoints}, {@code CheckBack} in {@code producer.internal}), and the
   * demo's raw-client injector re-sends a message exactly as the half-message backend does ({@code OutgoingMessages}).
   */
  @Test
  void otherModulesUseTheProducerThroughItsApi() {
    DescribedPredicate<JavaClass> producer = resideInAPackage("io.converge.producer..");
    DescribedPredicate<JavaClass> api = resideInAnyPackage("io.converge.producer", "io.converge.producer.spi..",
        "io.converge.producer.spring..").or(named("io.converge.producer.rocketmq.RocketMQBackend"));
    DescribedPredicate<JavaClass> transactionLog = named("io.converge.producer.internal.TxnLog",
        "io.converge.producer.internal.CrashPoints", "io.converge.producer.internal.CheckBack");
    CompositeArchRule.of(noClasses().that()
        .resideOutsideOfPackages("io.converge.producer..", "io.converge.pulsar..", "io.converge.ops..",
            "io.converge.examples.demo..")
        .should().dependOnClassesThat(producer.and(not(api)).and(not(transactionLog))))
        .and(noClasses().that().resideOutsideOfPackages("io.converge.producer..", "io.converge.pulsar..",
            "io.converge.ops..").should().dependOnClassesThat(transactionLog))
        .and(noClasses().that().resideInAnyPackage("io.converge.pulsar..", "io.converge.ops..").should()
            .dependOnClassesThat(producer.and(not(api)).and(not(transactionLog))))
        .and(noClasses().that().resideInAPackage("io.converge.examples.demo..").should().dependOnClassesThat(
            producer.and(not(api)).and(not(named("io.converge.producer.rocketmq.OutgoingMessages")))))
        .because("the producer's implementation may change in any release; its API and SPI are the contract")
        .check(main);
  }

  /**
   * An SPI is a contract (interfaces, records, small helpers), not an implementation: no SQL in an {@code spi}
   * package.
   */
  @Test
  void spiPackagesRunNoSql() {
    noClasses().that().resideInAPackage("io.converge..spi..").should()
        .dependOnClassesThat().haveFullyQualifiedName("java.sql.PreparedStatement")
        .orShould().dependOnClassesThat().haveFullyQualifiedName("java.sql.Statement")
        .orShould().dependOnClassesThat().haveFullyQualifiedName("java.sql.ResultSet")
        .because("an SPI package holds what a backend implements or is given, not the code that runs it")
        .check(main);
  }

  /**
   * Micrometer is an optional dependency of every library: only its adapters ({@code <module>.micrometer}) and the
   * Spring support ({@code .spring}) use it, so that a service without Micrometer loads every other class. Known
   * exceptions: the console's stuck-message gauges and {@code PulsarBackend}'s {@code meterRegistry(MeterRegistry)}
   * setting (a signature only: the class loads without Micrometer until the setting is called).
   */
  @Test
  void onlyMicrometerAdaptersAndSpringSupportUseMicrometer() {
    noClasses().that().resideInAnyPackage(LIBRARY)
        .and().resideOutsideOfPackages("io.converge..micrometer..", "io.converge..spring..")
        .and(not(named("io.converge.console.stuck.StuckGauges", "io.converge.pulsar.PulsarBackend")))
        .should().dependOnClassesThat().resideInAPackage("io.micrometer..")
        .because("micrometer-core is optional: a class outside the adapters must load without it")
        .check(main);
  }

  /** The classes named {@code names} (fully qualified) and the classes nested in them. */
  static DescribedPredicate<JavaClass> named(String... names) {
    java.util.Set<String> set = java.util.Set.of(names);
    return DescribedPredicate.describe(String.join(", ", names), c -> {
      String top = c.getName().contains("$") ? c.getName().substring(0, c.getName().indexOf('$')) : c.getName();
      return set.contains(top);
    });
  }

  /** No library depends on test support, the examples or the ops tools: they sit above the libraries. */
  @Test
  void librariesDependOnNoTestSupportExamplesOrOpsTools() {
    noClasses().that().resideInAnyPackage(LIBRARY).should().dependOnClassesThat()
        .resideInAnyPackage("io.converge.broker..", "io.converge.testing..", "io.converge.examples..",
            "io.converge.ops..")
        .because("broker-embedded, converge-testing, the examples and ops are never on a service's class path")
        .check(main);
  }

  /** The examples are written as an adopter writes a service: through published APIs, never internals. */
  @Test
  void theExamplesUseNoInternalPackage() {
    noClasses().that().resideInAPackage("io.converge.examples..").should().dependOnClassesThat()
        .resideInAPackage("io.converge..internal..")
        .because("the examples are an adopter's view: internal packages may change in any release")
        .check(main);
  }

  /** No cycle between the top-level packages (core, producer, consumer, outbox, pulsar, console, broker, ...). */
  @Test
  void theTopLevelPackagesHaveNoCycle() {
    slices().matching("io.converge.(*)..").should().beFreeOfCycles().check(main);
  }
}
