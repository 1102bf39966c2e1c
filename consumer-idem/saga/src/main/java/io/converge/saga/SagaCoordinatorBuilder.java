package io.converge.saga;

import io.converge.consumer.FailurePolicy;
import io.converge.core.internal.Require;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.saga.internal.DefaultSagaCoordinator;
import java.lang.management.ManagementFactory;
import java.net.http.HttpClient;
import java.time.Clock;
import io.converge.core.tracing.Tracing;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

/**
 * Builds a {@link SagaCoordinator}. Defaults are applied and every setting is validated in {@link #build()}, which
 * names the setting and quotes the bad value. Not thread-safe.
 */
public final class SagaCoordinatorBuilder {

  private static final Pattern GROUP = Pattern.compile("[A-Za-z0-9_%|-]{1,128}");

  /**
   * The validated settings.
   *
   * @param producer the unit of work of every transition; its data source holds the saga tables; required
   * @param definitions the sagas this coordinator drives, by name; at least one
   * @param replyTopic where participants reply; required
   * @param replyGroup the consumer group of the reply handler's dedup; default {@code converge-saga-<replyTopic>}
   * @param replyPolicy the reply handler's failure policy; default {@link FailurePolicy#defaults()}
   * @param instanceId this instance's name (thread names, logs); default the JVM's {@code pid@host}
   * @param pollInterval the wait between polls; default 1 s
   * @param batchSize due sagas driven per poll at most; default 100
   * @param compensationRate the compensation rate of participants without one of their own; default 50/s, burst 50
   * @param participantRates compensation rates per participant
   * @param metrics where to count; default nothing
   * @param clock the time of the saga tables (timeouts, deadlines); default the system UTC clock
   * @param nanoTime the time source of the rate limits; default {@link System#nanoTime()}
   * @param httpClient the client of TCC branches reached over HTTP; null (the default): one of the coordinator's
   *     own, with {@code httpConnectTimeout}
   * @param httpConcurrency HTTP branch calls made at once at most (the threads that make them); default 8
   * @param httpConnectTimeout the connect timeout of the coordinator's own HTTP client; default 5 s (a call's
   *     whole timeout is its branch's {@link TccBranchSpec#timeout})
   * @param participantRetention how long the {@link SagaParticipant}s keep their rows: no command of a saga step is
   *     sent for a saga older than it less {@link SagaBranchRetention#SEND_MARGIN}; default
   *     {@link SagaBranchRetention#defaults()}
   * @param retryWindow how long past its deadline a saga may still be sending commands in its normal course (its
   *     compensations, their re-sends and rate-limit waits); validated to fit in {@code participantRetention} with
   *     every definition's deadline; default {@link SagaBranchRetention#DEFAULT_RETRY_WINDOW}
   */
  public record Settings(TxnProducer producer, Map<String, SagaDefinition<?>> definitions, String replyTopic,
      String replyGroup, FailurePolicy replyPolicy, String instanceId, Duration pollInterval, int batchSize,
      CompensationRate compensationRate, Map<String, CompensationRate> participantRates, SagaMetrics metrics,
      Clock clock, LongSupplier nanoTime, HttpClient httpClient, int httpConcurrency, Duration httpConnectTimeout,
      SagaBranchRetention participantRetention, Duration retryWindow) {
  }

  private TxnProducer producer;
  private final List<SagaDefinition<?>> definitions = new java.util.ArrayList<>();
  private String replyTopic;
  private String replyGroup;
  private FailurePolicy replyPolicy = FailurePolicy.defaults();
  private String instanceId = ManagementFactory.getRuntimeMXBean().getName();
  private Duration pollInterval = Duration.ofSeconds(1);
  private Tracing tracing = Tracing.global();
  private int batchSize = 100;
  private CompensationRate compensationRate = new CompensationRate(50, 50);
  private final Map<String, CompensationRate> participantRates = new HashMap<>();
  private SagaMetrics metrics = SagaMetrics.NONE;
  private Clock clock = Clock.systemUTC();
  private LongSupplier nanoTime = System::nanoTime;
  private HttpClient httpClient;
  private int httpConcurrency = 8;
  private Duration httpConnectTimeout = Duration.ofSeconds(5);
  private Duration participantRetention = SagaBranchRetention.DEFAULT_RETENTION;
  private Duration retryWindow = SagaBranchRetention.DEFAULT_RETRY_WINDOW;

  SagaCoordinatorBuilder() {
  }

  /** The producer whose units of work carry every transition; required. */
  public SagaCoordinatorBuilder producer(TxnProducer producer) {
    this.producer = producer;
    return this;
  }

  /** Sagas this coordinator drives (names unique); at least one. */
  public SagaCoordinatorBuilder definitions(SagaDefinition<?>... defs) {
    definitions.addAll(List.of(defs));
    return this;
  }

  /**
   * TCC global transactions this coordinator drives (each as its {@link TccDefinition#saga() saga shape}; names
   * unique among the sagas and the TCC definitions).
   */
  public SagaCoordinatorBuilder tcc(TccDefinition<?>... defs) {
    for (TccDefinition<?> d : defs) {
      definitions.add(Require.present("saga.tcc[]", d).saga());
    }
    return this;
  }

  /**
   * The HTTP client of TCC branches reached over HTTP; default one of the coordinator's own (with
   * {@link #httpConnectTimeout(Duration)}).
   */
  public SagaCoordinatorBuilder httpClient(HttpClient client) {
    this.httpClient = client;
    return this;
  }

  /**
   * HTTP branch calls made at once at most, by threads of the coordinator's own (a poll hands them its calls and
   * waits for them); 1..1000; default 8.
   */
  public SagaCoordinatorBuilder httpConcurrency(int calls) {
    this.httpConcurrency = calls;
    return this;
  }

  /** The connect timeout of the coordinator's own HTTP client; 1 ms..10 min; default 5 s. */
  public SagaCoordinatorBuilder httpConnectTimeout(Duration timeout) {
    this.httpConnectTimeout = timeout;
    return this;
  }

  /**
   * How long the {@link SagaParticipant}s keep their rows ({@code converge.saga.branch-retention} on their side; the
   * same value or a shorter one here): the coordinator sends no command of a saga step for a saga older than this
   * less {@link SagaBranchRetention#SEND_MARGIN}, but ends the saga with a {@code RETENTION} ticket. At least
   * {@link SagaBranchRetention#MIN_RETENTION}; default {@link SagaBranchRetention#DEFAULT_RETENTION}. TCC branches
   * are not bound by it (their barrier keeps an unfinished branch's rows).
   */
  public SagaCoordinatorBuilder participantRetention(Duration retention) {
    this.participantRetention = retention;
    return this;
  }

  /**
   * How long past its deadline a saga may still be sending commands in its normal course (its compensations, their
   * re-sends, rate-limit waits); every definition's deadline plus this plus {@link SagaBranchRetention#SEND_MARGIN}
   * must fit in the {@link #participantRetention}. Default {@link SagaBranchRetention#DEFAULT_RETRY_WINDOW}.
   */
  public SagaCoordinatorBuilder retryWindow(Duration window) {
    this.retryWindow = window;
    return this;
  }

  /** The topic participants reply to (sent in every command's {@link SagaHeaders#REPLY_TO}); required. */
  public SagaCoordinatorBuilder replyTopic(String topic) {
    this.replyTopic = topic;
    return this;
  }

  /** The reply handler's consumer group; default {@code converge-saga-<replyTopic>}. */
  public SagaCoordinatorBuilder replyGroup(String group) {
    this.replyGroup = group;
    return this;
  }

  /** The reply handler's failure policy; default {@link FailurePolicy#defaults()}. */
  public SagaCoordinatorBuilder replyPolicy(FailurePolicy policy) {
    this.replyPolicy = policy;
    return this;
  }

  /** This instance's name (thread names, logs); default the JVM's {@code pid@host}. */
  public SagaCoordinatorBuilder instanceId(String id) {
    this.instanceId = id;
    return this;
  }

  /** The wait between polls for due sagas; 1 ms..1 h; default 1 s. */
  public SagaCoordinatorBuilder pollInterval(Duration interval) {
    this.pollInterval = interval;
    return this;
  }

  /** Due sagas driven per poll at most; 1..10000; default 100. */
  public SagaCoordinatorBuilder batchSize(int size) {
    this.batchSize = size;
    return this;
  }

  /**
   * The compensation rate of participants without a rate of their own: {@code perSecond} compensation commands a
   * second, {@code burst} at once at most; default 50/s, burst 50. Per coordinator instance.
   */
  public SagaCoordinatorBuilder compensationRate(double perSecond, int burst) {
    this.compensationRate = new CompensationRate(perSecond, burst);
    return this;
  }

  /** The compensation rate of {@code participant}, as {@link #compensationRate(double, int)}. */
  public SagaCoordinatorBuilder compensationRate(String participant, double perSecond, int burst) {
    participantRates.put(participant, new CompensationRate(perSecond, burst));
    return this;
  }

  /** Where to count; default nothing. */
  public SagaCoordinatorBuilder metrics(SagaMetrics metrics) {
    this.metrics = metrics;
    return this;
  }

  /** The time of the saga tables (timeouts, deadlines, next attempts); default the system UTC clock. */
  public SagaCoordinatorBuilder clock(Clock clock) {
    this.clock = clock;
    return this;
  }

  /** The time source of the rate limits (nanoseconds); default {@link System#nanoTime()}. */
  public SagaCoordinatorBuilder nanoTime(LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
    return this;
  }

  /**
   * Where the coordinator's spans go (default {@link Tracing#global()}). {@code start} opens a span
   * {@code saga <definition>} under the current context (e.g. the HTTP request's server span) and stores its context
   * in the saga's row; every command sent (re-sends after a timeout or a restart included), reply applied, local step
   * and HTTP branch call runs under a span {@code saga step <step>}, a <b>child</b> of that stored context, whichever
   * instance makes it: the saga stays one trace. A reply's processing span is a child of the reply's creation context
   * ({@code traceAsParent}). Build the producer with the same instance ({@code TxnProducer.builder().tracing}).
   */
  public SagaCoordinatorBuilder tracing(Tracing tracing) {
    this.tracing = tracing;
    return this;
  }

  /**
   * Validates the settings and builds the coordinator (it does not poll until {@link SagaCoordinator#startPolling()}).
   *
   * @throws IllegalArgumentException naming the setting and quoting its bad value
   * @throws NullPointerException naming a missing required setting
   */
  public SagaCoordinator build() {
    Require.present("saga.producer", producer);
    Require.that(!definitions.isEmpty(), "saga.definitions", "hold at least one definition", "none");
    Map<String, SagaDefinition<?>> byName = new LinkedHashMap<>();
    for (SagaDefinition<?> d : definitions) {
      Require.present("saga.definitions[]", d);
      Require.that(byName.putIfAbsent(d.name(), d) == null, "saga.definitions", "have unique names",
          "'" + d.name() + "' twice");
    }
    Require.that(replyTopic != null && OutgoingMessage.TOPIC.matcher(replyTopic).matches(), "saga.replyTopic",
        "match " + OutgoingMessage.TOPIC.pattern(), replyTopic == null ? null : "'" + replyTopic + "'");
    String group = replyGroup != null ? replyGroup : "converge-saga-" + replyTopic;
    Require.matches("saga.replyGroup", group, GROUP);
    Require.present("saga.replyPolicy", replyPolicy);
    Require.that(instanceId != null && !instanceId.isBlank(), "saga.instanceId", "not be blank", instanceId);
    Require.between("saga.pollInterval", pollInterval, Duration.ofMillis(1), Duration.ofHours(1), "1 ms and 1 h");
    Require.between("saga.batchSize", batchSize, 1, 10_000);
    rate("saga.compensationRate", compensationRate);
    participantRates.forEach((p, r) -> rate("saga.compensationRate[" + p + "]", r));
    Require.between("saga.httpConcurrency", httpConcurrency, 1, 1000);
    Require.between("saga.httpConnectTimeout", httpConnectTimeout, Duration.ofMillis(1), Duration.ofMinutes(10),
        "1 ms and 10 min");
    SagaBranchRetention retention = new SagaBranchRetention(participantRetention);
    Require.present("saga.retryWindow", retryWindow);
    for (SagaDefinition<?> d : byName.values()) {
      if (d.steps().stream().anyMatch(SagaStep::boundByRetention)) {
        retention.covering(d.name(), d.deadline(), retryWindow);
      }
    }
    return new DefaultSagaCoordinator(new Settings(producer, Map.copyOf(byName), replyTopic, group, replyPolicy,
        instanceId, pollInterval, batchSize, compensationRate, Map.copyOf(participantRates),
        Require.present("saga.metrics", metrics), Require.present("saga.clock", clock),
        Require.present("saga.nanoTime", nanoTime), httpClient, httpConcurrency, httpConnectTimeout, retention,
        retryWindow),
        Require.present("saga.tracing", tracing));
  }

  private static void rate(String property, CompensationRate r) {
    Require.that(r.perSecond() > 0 && r.perSecond() <= 1_000_000, property + ".perSecond",
        "be above 0 and at most 1000000", r.perSecond());
    Require.between(property + ".burst", r.burst(), 1, 1_000_000);
  }
}
