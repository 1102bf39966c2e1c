package io.converge.consumer;

import io.converge.consumer.internal.EnvelopeRules;
import io.converge.consumer.internal.IdempotentHandlerImpl;
import io.converge.consumer.internal.TracedHandler;
import io.converge.core.tracing.Tracing;
import io.converge.core.SchemaVersion;
import io.converge.core.SigningKeys;
import io.converge.core.internal.Require;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The dedup decorator around a {@link MessageHandler}, framework-free. Per delivery it opens one
 * transaction, claims {@code (tenant, group, message id)} in {@code converge_dedup} with
 * {@code INSERT … ON CONFLICT DO NOTHING}, runs the handler on the same connection and commits; the
 * caller acks after {@link #handle} returns. A duplicate, earlier or concurrent, on any instance,
 * returns {@link Outcome#DUPLICATE} without running the handler (a concurrent claim waits on the
 * unique index until the first transaction ends). Failures follow the {@link FailurePolicy} and the
 * {@link FailureClassifier}.
 *
 * <p>Thread-safe: one instance serves every consumer thread. Schema: apply
 * {@code Migrations.apply(dataSource, "consumer")} first.
 */
public interface IdempotentHandler {

  /**
   * Handles one delivery to an outcome. Every returned outcome means "ack": the message is either
   * done, recorded as refused, or parked in {@code converge_dlq}. Any failure rolls the handler's whole
   * transaction back, with every message it published; a business refusal or a money anomaly is then
   * recorded in a transaction of its own. Technical failures are retried in this call (with backoff) up
   * to the policy's attempts. An outage of the database or of a broker ({@link FailureKind#UNAVAILABLE})
   * counts no attempt: this call waits (the policy's outage backoff) and runs the message again until the
   * outage ends, blocking the calling thread meanwhile.
   *
   * @throws io.converge.core.ConvergeException when the failure could not be recorded and it is no
   *     outage, or when the calling thread is interrupted while it waits: do not ack, let the broker redeliver
   */
  Outcome handle(IncomingMessage message);

  /**
   * Runs a parked message from {@code converge_dlq} again (after a person fixed the cause): in one
   * transaction it releases the message's dead-letter claim, runs the handler, and marks the row
   * {@code RESUMED}. When the handler fails the row stays parked and the failure is thrown. Call it on the
   * handler of the row's topic (a group may consume several, each with its own handler): the messages held
   * behind it, on its topic, run next.
   *
   * @throws IllegalArgumentException when no parked row {@code dlqId} exists for this group
   */
  Outcome resume(long dlqId);

  /**
   * Runs the held messages of this group on {@code topics} whose key is free again, in the order they were held. A
   * message is held ({@link Outcome#HELD}, a {@code converge_dlq} row with reason code {@code HELD}) when it
   * arrives while an earlier message of its key (same tenant, topic and broker key) is parked; once no
   * other parked row of its key remains (the parked one was {@linkplain #resume resumed} or discarded), it
   * runs like a new delivery: processed, refused, retried per the policy and, after its attempts, parked
   * again at its place, holding the messages behind it. {@link #resume} releases the key it resumed at
   * once; the bindings call this method on a schedule for the rest (a discard by ops). Safe to call from
   * several instances at once.
   * Before them it runs the parked messages of this group on {@code topics} that ops marked for re-drive
   * ({@link ConsumerOps#redrive(long)}), oldest first, as {@link #resume} does. A call never sleeps out a
   * backoff: a held or re-driven message that fails for a technical reason is retried at the first call after
   * its backoff, and the call goes on with the others.
   *
   * <p>{@code topics} are the topics this handler is bound to, as {@link IncomingMessage#topic()} names them (the
   * binding knows them; {@link io.converge.consumer.spi.HeldReleaser} passes them): the rows of the group's other
   * topics belong to the handlers of those topics, whose code must run them, and are left alone.
   *
   * @param topics the handler's topics; not null, not empty
   * @return how many held messages ran
   * @throws IllegalArgumentException when {@code topics} is empty
   */
  default int releaseHeld(Collection<String> topics) {
    return 0;
  }

  /** The consumer group this handler deduplicates in. */
  String group();

  /** A builder; {@code group}, {@code handler} and a data source or transaction runner are required. */
  static Builder builder() {
    return new Builder();
  }

  /** Builds an {@link IdempotentHandler}. Not thread-safe; defaults are applied and validated in {@link #build()}. */
  final class Builder {

    private static final Pattern GROUP = Pattern.compile("[A-Za-z0-9_%|-]{1,128}");

    private String group;
    private MessageHandler handler;
    private TransactionRunner transactions;
    private DataSource dataSource;
    private MessageIdResolver idResolver = MessageIdResolver.envelope();
    private FailurePolicy policy = FailurePolicy.defaults();
    private FailureClassifier classifier = FailureClassifier.defaults();
    private BusinessFailureHook onBusinessFailure = (c, m, e) -> {
    };
    private ConsumerMetrics metrics = ConsumerMetrics.NONE;
    private Clock clock = Clock.systemUTC();
    private boolean claimWithFirstStatement;
    private Tracing tracing = Tracing.global();
    private boolean traceAsParent;
    private SigningKeys signingKeys;
    private Duration maxAge;
    private Duration clockSkew;
    private final Map<String, Set<Integer>> schemas = new TreeMap<>();
    private boolean requireSchema;

    /** The default clock-skew tolerance of the replay window: 5 minutes. */
    public static final Duration DEFAULT_CLOCK_SKEW = Duration.ofMinutes(5);

    /**
     * The default replay window with {@link #requireSignature}: 7 days less {@link #DEFAULT_CLOCK_SKEW}, so that with
     * the skew it stays within the dedup rows' default retention of 7 days.
     */
    public static final Duration DEFAULT_REPLAY_WINDOW = Duration.ofDays(7).minus(DEFAULT_CLOCK_SKEW);

    private Builder() {
    }

    /** The consumer group (dedup scope); required; letters, digits, {@code _ - % |}, 1..128. */
    public Builder group(String group) {
      this.group = group;
      return this;
    }

    /** The business handler; required. */
    public Builder handler(MessageHandler handler) {
      this.handler = handler;
      return this;
    }

    /** The database; plain JDBC transactions. Either this or {@link #transactions} is required. */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = dataSource;
      return this;
    }

    /** A transaction runner (e.g. Spring's); wins over {@link #dataSource}. */
    public Builder transactions(TransactionRunner transactions) {
      this.transactions = transactions;
      return this;
    }

    /** Where the message id comes from; default {@link MessageIdResolver#envelope()} only. */
    public Builder messageId(MessageIdResolver resolver) {
      this.idResolver = Objects.requireNonNull(resolver, "messageId");
      return this;
    }

    /** The failure policy; default {@link FailurePolicy#defaults()}. */
    public Builder policy(FailurePolicy policy) {
      this.policy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /** The failure classifier; default {@link FailureClassifier#defaults()}. */
    public Builder classifier(FailureClassifier classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /**
     * Called in the transaction that records a business failure (after the handler's writes were
     * rolled back), e.g. to publish a compensation message through a {@code TxnProducer} that joins
     * this connection. Default: nothing.
     */
    public Builder onBusinessFailure(BusinessFailureHook hook) {
      this.onBusinessFailure = Objects.requireNonNull(hook, "onBusinessFailure");
      return this;
    }

    /** Metrics; default {@link ConsumerMetrics#NONE}. */
    public Builder metrics(ConsumerMetrics metrics) {
      this.metrics = Objects.requireNonNull(metrics, "metrics");
      return this;
    }

    /** The clock for timestamps; default UTC system clock. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * With {@code true}, a first delivery's claim travels to the database with the handler's first
     * statement, in one round trip instead of two (plain JDBC through {@link #dataSource} and the
     * PostgreSQL driver; otherwise ignored). The server runs the claim first: for a duplicate or a held
     * key it fails, the handler's statement never runs, the handler sees an {@code SQLException} and
     * the transaction rolls back, so a duplicate still has no effect and a concurrent copy still waits
     * on the claim. The difference: the handler's code <em>before</em> its first statement runs for a
     * duplicate too. Redeliveries (delivery count above 1) claim first as without it. Default
     * {@code false}.
     */
    public Builder claimWithFirstStatement(boolean enabled) {
      this.claimWithFirstStatement = enabled;
      return this;
    }

    /**
     * Where the CONSUMER span {@code "process {topic}"} of each delivery goes; it is current while the delivery runs,
     * so the handler's own spans and the messages it publishes are in its trace. Default {@link Tracing#global()}
     * (nothing without the OpenTelemetry API); {@code OpenTelemetryTracing.of(openTelemetry)} names an instance.
     */
    public Builder tracing(Tracing tracing) {
      this.tracing = Objects.requireNonNull(tracing, "tracing");
      return this;
    }

    /**
     * Requires every message to carry a valid {@code converge-signature} ({@code io.converge.core.MessageSignature}),
     * verified with any active key of {@code keys}. One that does not (unsigned, malformed or truncated signature,
     * unknown or retired key id, a signature on a message without a body, a MAC mismatch) is parked in
     * {@code converge_dlq} as {@code SIGNATURE_INVALID} with the reason quoted: never run, nothing claimed (its id is
     * not trusted), its key held like behind any parked message; it cannot be re-driven or resumed, only discarded.
     * Also turns on the replay window ({@link #replayWindow}), by default {@link #DEFAULT_REPLAY_WINDOW} and
     * {@link #DEFAULT_CLOCK_SKEW}. Default: signatures are not checked.
     */
    public Builder requireSignature(SigningKeys keys) {
      this.signingKeys = Objects.requireNonNull(keys, "requireSignature");
      return this;
    }

    /**
     * With {@code true} the process span is a child of the message's creation context (its {@code traceparent}): one
     * trace from the producer's request to this handler. Default {@code false}: the span is linked to it (the
     * OpenTelemetry messaging conventions' default, since a message may be processed long after, and more than once).
     */
    public Builder traceAsParent(boolean asParent) {
      this.traceAsParent = asParent;
      return this;
    }

    /**
     * Parks a message created ({@code converge-created-at}) more than {@code maxAge} before it arrives, or more than
     * {@code clockSkew} after, as {@code REPLAYED} (holding its key; ops may re-drive it, its age is then not checked
     * again); one without a readable creation time too. A copy whose id the dedup table still holds stays a plain
     * duplicate. Keep {@code maxAge + clockSkew} within the dedup rows' retention (7 days by default), so that every
     * replay is refused by one or the other. Only a signed creation time cannot be forged: use it with
     * {@link #requireSignature}. Default: off, or {@link #DEFAULT_REPLAY_WINDOW} (7 days less 5 minutes) and
     * {@link #DEFAULT_CLOCK_SKEW} (5 minutes) with {@link #requireSignature}.
     *
     * @param maxAge between 1 minute and 365 days
     * @param clockSkew between zero and 1 hour
     */
    public Builder replayWindow(Duration maxAge, Duration clockSkew) {
      this.maxAge = maxAge;
      this.clockSkew = clockSkew;
      return this;
    }

    /**
     * Reads every minor version of major {@code major} of schema {@code type} ({@code converge-schema}
     * {@code type/major.minor}); call once per type and major. Once any is declared, a message of another type or
     * major, or whose header is malformed, is parked as {@code SCHEMA_UNSUPPORTED} with the reason quoted: not a
     * business failure, not retried, no attempt counted, its key held, so a deploy in the wrong order stops that
     * key's stream instead of corrupting it; after the upgrade, ops re-drive (or {@link IdempotentHandler#resume}) it and the held
     * messages behind it follow. A message without the header is read unless {@link #requireSchema}. Default: no
     * schema is checked.
     *
     * @param type the type name ({@code SchemaVersion.TYPE})
     * @param major the major version, 0..999999999
     * @throws IllegalArgumentException quoting a bad type or major
     */
    public Builder acceptSchema(String type, int major) {
      Require.matches("consumer.acceptSchema.type", type, SchemaVersion.TYPE);
      Require.between("consumer.acceptSchema.major", major, 0, 999_999_999);
      schemas.computeIfAbsent(type, t -> new TreeSet<>()).add(major);
      return this;
    }

    /** With {@code true}, a message without {@code converge-schema} is parked too; needs {@link #acceptSchema}. */
    public Builder requireSchema(boolean required) {
      this.requireSchema = required;
      return this;
    }

    /** The handler. @throws IllegalArgumentException naming the first missing or invalid setting */
    public IdempotentHandler build() {
      Require.matches("consumer.group", group, GROUP);
      Require.that(handler != null, "consumer.handler", "be set", null);
      TransactionRunner tx = transactions;
      if (tx == null) {
        Require.that(dataSource != null, "consumer.dataSource (or transactions)", "be set", null);
        tx = TransactionRunner.jdbc(dataSource);
      }
      Require.that(!requireSchema || !schemas.isEmpty(), "consumer.requireSchema", "come with acceptSchema", "true"
          + " without any");
      Duration age = maxAge;
      Duration skew = clockSkew;
      if (age == null && skew == null && signingKeys != null) {
        age = DEFAULT_REPLAY_WINDOW;
        skew = DEFAULT_CLOCK_SKEW;
      }
      if (age != null || skew != null) {
        Require.between("consumer.replayWindow.maxAge", age, Duration.ofMinutes(1), Duration.ofDays(365),
            "1 min and 365 days");
        Require.between("consumer.replayWindow.clockSkew", skew, Duration.ZERO, Duration.ofHours(1), "0 and 1 h");
      }
      EnvelopeRules rules = new EnvelopeRules(signingKeys, age, skew, schemas, requireSchema);
      return TracedHandler.wrap(new IdempotentHandlerImpl(group, handler, tx, idResolver, policy, classifier,
          onBusinessFailure, metrics, clock, claimWithFirstStatement, rules, tracing, traceAsParent), tracing,
          traceAsParent);
    }
  }

  /** Runs in the transaction that records a business failure. */
  @FunctionalInterface
  interface BusinessFailureHook {

    /** Reacts to {@code failure} of {@code message} on {@code connection}. */
    void accept(Connection connection, IncomingMessage message, Throwable failure) throws Exception;
  }
}
