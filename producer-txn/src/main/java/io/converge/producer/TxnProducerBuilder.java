package io.converge.producer;

import io.converge.core.ConvergeException;
import io.converge.core.tracing.Tracing;
import io.converge.core.SigningKeys;
import io.converge.producer.spi.BackendFactory;
import io.converge.producer.spi.ProducerMetrics;
import io.converge.core.internal.Require;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Builds a {@link TxnProducer}. Defaults are applied and every setting is validated in {@link #build()},
 * which names the setting and the bad value. Not thread-safe.
 */
public final class TxnProducerBuilder {

  private static final Pattern GROUP = Pattern.compile("[A-Za-z0-9_-]{1,100}");

  /**
   * The validated settings of a producer.
   *
   * @param group producer group; required
   * @param dataSource the database of the unit of work and of the transaction log; required
   * @param backend the backend; required
   * @param topics topics registered at start (so this instance can answer check-backs at once); default none
   * @param maxPayloadBytes largest payload accepted; default 4 MiB
   * @param maxUnitBytes the most payload bytes one unit of work may publish, all its messages together; default 256 MiB
   * @param maxUnitMessages the most messages one unit of work may publish; default 100,000
   * @param localTransactionTimeout longest unit of work; default 30 s
   * @param logRetention how long transaction-log rows are kept; default 7 days, at least twice
   *     {@code brokerCheckWindow} and 1 hour
   * @param brokerCheckWindow how long the broker may ask about one message; default 7.5 min
   * @param purgeInterval how often old rows are purged; default 10 minutes; zero disables
   * @param metrics where to count; default nothing
   * @param clock the time source; default the system UTC clock
   * @param tracing where the publish spans go; default {@link Tracing#global()}
   * @param signingKeys the keys every message is signed with ({@link #sign}); null (the default) signs nothing
   */
  public record Settings(
      String group,
      DataSource dataSource,
      BackendFactory backend,
      List<String> topics,
      int maxPayloadBytes,
      long maxUnitBytes,
      int maxUnitMessages,
      Duration localTransactionTimeout,
      Duration logRetention,
      Duration brokerCheckWindow,
      Duration purgeInterval,
      ProducerMetrics metrics,
      Clock clock,
      Tracing tracing,
      SigningKeys signingKeys) {
  }

  private final Function<Settings, TxnProducer> factory;
  private String group;
  private DataSource dataSource;
  private BackendFactory backend;
  private final List<String> topics = new ArrayList<>();
  private int maxPayloadBytes = 4 * 1024 * 1024;
  /**
   * The largest {@link #maxUnitBytes}: the Pulsar backend logs a unit's payloads as one {@code bytea[]} value, sent as
   * text (hex, twice the bytes), and PostgreSQL refuses a value over 1 GB.
   */
  public static final long MAX_UNIT_BYTES = 256L * 1024 * 1024;

  private long maxUnitBytes = MAX_UNIT_BYTES;
  private int maxUnitMessages = 100_000;
  private Duration localTransactionTimeout = Duration.ofSeconds(30);
  /** RocketMQ's defaults: transactionCheckMax 15 x transactionCheckInterval 30 s. */
  public static final Duration DEFAULT_BROKER_CHECK_WINDOW = Duration.ofSeconds(15 * 30);

  private Duration logRetention = Duration.ofDays(7);
  private Duration brokerCheckWindow = DEFAULT_BROKER_CHECK_WINDOW;
  private Duration purgeInterval = Duration.ofMinutes(10);
  private ProducerMetrics metrics = ProducerMetrics.NONE;
  private Clock clock = Clock.systemUTC();
  private Tracing tracing = Tracing.global();
  private SigningKeys signingKeys;

  TxnProducerBuilder(Function<Settings, TxnProducer> factory) {
    this.factory = factory;
  }

  /** The producer group: one name per service and message flow; instances of a group recover for each other. */
  public TxnProducerBuilder group(String group) {
    this.group = group;
    return this;
  }

  /** The database: units of work run on its connections, the transaction log lives in it. */
  public TxnProducerBuilder dataSource(DataSource dataSource) {
    this.dataSource = dataSource;
    return this;
  }

  /** The backend, e.g. {@code RocketMQBackend.nameServer("127.0.0.1:9876")}. */
  public TxnProducerBuilder backend(BackendFactory backend) {
    this.backend = backend;
    return this;
  }

  /** Topics to register with the brokers at start: an unknown one fails the build. */
  public TxnProducerBuilder topics(String... names) {
    topics.addAll(List.of(names));
    return this;
  }

  /** The largest payload accepted, in bytes; default 4 MiB. */
  public TxnProducerBuilder maxPayloadBytes(int bytes) {
    this.maxPayloadBytes = bytes;
    return this;
  }

  /**
   * The most payload bytes one unit of work may publish, its messages together; default and most 256 MiB
   * ({@link #MAX_UNIT_BYTES}), at least {@link #maxPayloadBytes}. Every backend holds a unit's messages in memory until it ends (to
   * write them with its commit, or to send them again after a savepoint rollback): the publish that would go over
   * fails with {@link UnitTooLargeException} before anything of it is sent, instead of the unit exhausting the heap.
   */
  public TxnProducerBuilder maxUnitBytes(long bytes) {
    this.maxUnitBytes = bytes;
    return this;
  }

  /**
   * The most messages one unit of work may publish; default 100,000, between 1 and 10,000,000. The publish that
   * would go over fails with {@link UnitTooLargeException} (see {@link #maxUnitBytes}).
   */
  public TxnProducerBuilder maxUnitMessages(int messages) {
    this.maxUnitMessages = messages;
    return this;
  }

  /**
   * The longest a unit of work may run; default 30 s. A message whose transaction is not committed
   * this long after it was prepared is rolled back by the check-back. Keep it well below the broker's
   * check window (transactionCheckMax × transactionCheckInterval).
   */
  public TxnProducerBuilder localTransactionTimeout(Duration timeout) {
    this.localTransactionTimeout = timeout;
    return this;
  }

  /**
   * How long transaction-log rows are kept; default 7 days. It must cover the broker's check window
   * with a margin: at least twice {@link #brokerCheckWindow} and at least 1 hour. A check-back for a
   * message older than this that finds no row is answered UNKNOWN and raises a ticket (the row may
   * have been purged after a commit); it is never guessed ROLLBACK.
   */
  public TxnProducerBuilder logRetention(Duration retention) {
    this.logRetention = retention;
    return this;
  }

  /**
   * The longest time the broker may ask about one message: for RocketMQ
   * {@code transactionCheckMax x transactionCheckInterval} of the broker's configuration; default
   * 15 x 30 s = 7.5 min (RocketMQ's defaults). Only validates {@link #logRetention}.
   */
  public TxnProducerBuilder brokerCheckWindow(Duration window) {
    this.brokerCheckWindow = window;
    return this;
  }

  /** How often old transaction-log rows are purged; default 10 minutes; {@code Duration.ZERO} disables. */
  public TxnProducerBuilder purgeInterval(Duration interval) {
    this.purgeInterval = interval;
    return this;
  }

  /** Where to count (see {@code io.converge.producer.micrometer.MicrometerProducerMetrics}); default nothing. */
  public TxnProducerBuilder metrics(ProducerMetrics metrics) {
    this.metrics = metrics;
    return this;
  }

  /** The time source; default the system UTC clock. */
  public TxnProducerBuilder clock(Clock clock) {
    this.clock = clock;
    return this;
  }

  /**
   * Where the PRODUCER span of each {@code publish} goes, whose W3C {@code traceparent} the message carries (stored
   * with it until it is sent, so every re-send continues its trace); default {@link Tracing#global()} (nothing
   * without the OpenTelemetry API). {@code OpenTelemetryTracing.of(openTelemetry)} names an instance,
   * {@link Tracing#none()} turns it off.
   */
  public TxnProducerBuilder tracing(Tracing tracing) {
    this.tracing = tracing;
    return this;
  }

  /**
   * Signs every message with {@code keys.current()}: header {@link io.converge.core.Envelope#SIGNATURE}, HMAC-SHA256
   * over the topic, the {@code converge-} headers and the payload ({@link io.converge.core.MessageSignature}).
   * Consumers verify it with {@code IdempotentHandler.Builder.requireSignature}. A signed message needs a body:
   * publishing one with an empty payload fails with {@link io.converge.core.InvalidMessageException}. Default: no
   * signature.
   */
  public TxnProducerBuilder sign(SigningKeys keys) {
    this.signingKeys = Require.present("producer.sign", keys);
    return this;
  }

  /**
   * Validates the settings, starts the backend and returns the producer.
   *
   * @throws IllegalArgumentException naming the setting and its bad value
   * @throws ConvergeException when the backend cannot start (e.g. its client library is missing)
   */
  public TxnProducer build() {
    Require.matches("producer.group", group, GROUP);
    Require.present("producer.dataSource", dataSource);
    Require.present("producer.backend", backend);
    for (String t : topics) {
      Require.that(t != null && OutgoingMessage.TOPIC.matcher(t).matches(), "producer.topics",
          "match " + OutgoingMessage.TOPIC.pattern(), t);
    }
    Require.between("producer.maxPayloadBytes", maxPayloadBytes, 1, 64 * 1024 * 1024);
    Require.that(maxUnitBytes >= maxPayloadBytes && maxUnitBytes <= MAX_UNIT_BYTES, "producer.maxUnitBytes",
        "be between producer.maxPayloadBytes (" + maxPayloadBytes + ") and " + MAX_UNIT_BYTES, maxUnitBytes);
    Require.between("producer.maxUnitMessages", maxUnitMessages, 1, 10_000_000);
    Require.that(localTransactionTimeout != null && localTransactionTimeout.compareTo(Duration.ofMillis(100)) >= 0
        && localTransactionTimeout.compareTo(Duration.ofMinutes(10)) <= 0, "producer.localTransactionTimeout",
        "be between 100 ms and 10 min", localTransactionTimeout);
    Require.atLeast("producer.brokerCheckWindow", brokerCheckWindow, Duration.ofSeconds(1), "1 s");
    Duration minRetention = brokerCheckWindow.multipliedBy(2).compareTo(Duration.ofHours(1)) > 0
        ? brokerCheckWindow.multipliedBy(2)
        : Duration.ofHours(1);
    Require.atLeast("producer.logRetention", logRetention, minRetention, minRetention
        + " (twice producer.brokerCheckWindow " + brokerCheckWindow
        + " = transactionCheckMax x transactionCheckInterval,"
        + " and at least 1 hour)");
    Require.notNegative("producer.purgeInterval", purgeInterval);
    return factory.apply(new Settings(group, dataSource, backend, List.copyOf(topics), maxPayloadBytes,
        maxUnitBytes, maxUnitMessages, localTransactionTimeout, logRetention, brokerCheckWindow, purgeInterval,
        Require.present("metrics", metrics),
        Require.present("clock", clock), Require.present("producer.tracing", tracing), signingKeys));
  }
}
