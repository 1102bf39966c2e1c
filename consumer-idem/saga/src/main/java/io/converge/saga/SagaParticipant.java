package io.converge.saga;

import io.converge.core.tracing.Tracing;
import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.core.internal.Require;
import io.converge.producer.TxnContext;
import io.converge.producer.TxnProducer;
import io.converge.saga.internal.ParticipantBranch;
import io.converge.saga.internal.ProducerTransactions;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The participant's side of a saga: runs a step's work and writes its reply in one transaction (the reply published
 * through the participant's {@link TxnProducer}), and stores the reply in {@code converge_saga_branch}, so a command
 * sent again (the coordinator asking after a timeout) gets the stored reply without running the work again. A
 * barrier per (saga, step): a compensation that arrives before its forward command is recorded as empty, and the
 * late forward command is refused, visibly ({@link ParticipantOutcome#HANGING_REFUSED}). Only inserts and updates of
 * rows this transaction inserted: never a locking read of a missing row.
 *
 * <p>Bind {@link #handler(String)} to consumers of the step's command and compensation topics (a pool for each:
 * compensations never wait behind forward work). Apply {@code Migrations.apply(dataSource, "saga")} and
 * {@code Migrations.apply(dataSource, "consumer")} to the participant's database. Thread-safe.
 *
 * <p>The rows are kept until {@link SagaBranchPurger} deletes them, past the {@link SagaBranchRetention}: schedule it
 * in the participant's service (the Spring auto-configuration does, on {@code converge.saga.branch-retention}).
 */
public final class SagaParticipant {

  private final String name;
  private final TxnProducer producer;
  private final Map<String, StepWork> forward;
  private final Map<String, StepWork> compensations;
  private final ParticipantBranch branch;
  private final Tracing tracing;

  private SagaParticipant(Builder b) {
    this.name = b.name;
    this.producer = b.producer;
    this.forward = Map.copyOf(b.forward);
    this.compensations = Map.copyOf(b.compensations);
    this.branch = new ParticipantBranch(name, b.metrics);
    this.tracing = b.tracing;
  }

  /** A builder for the participant {@code name} (the first column of its barrier rows). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** The participant's name. */
  public String name() {
    return name;
  }

  /**
   * Handles one command inside {@code tx} (a unit of work of the participant's producer): runs the step's work or
   * replays its stored reply, and publishes the reply to the command's {@link SagaHeaders#REPLY_TO}.
   *
   * @throws io.converge.consumer.BusinessException when the message is not a saga command or names a step this
   *     participant does not serve
   */
  public ParticipantOutcome handle(TxnContext tx, IncomingMessage command) throws Exception {
    return branch.handle(tx, command, forward, compensations);
  }

  /**
   * An {@link IdempotentHandler} for consumers of this participant's command and compensation topics: broker
   * redeliveries of one send are deduplicated in {@code group}, and each send runs {@link #handle} in one unit of
   * work of the participant's producer.
   */
  public IdempotentHandler handler(String group) {
    return handler(group, FailurePolicy.defaults());
  }

  /** As {@link #handler(String)}, with a failure policy for the handler. */
  public IdempotentHandler handler(String group, FailurePolicy policy) {
    // a child of the command's creation context: the step's work and the reply it publishes stay in the saga's trace
    return IdempotentHandler.builder().group(group).transactions(new ProducerTransactions(producer)).policy(policy)
        .tracing(tracing).traceAsParent(true).handler((c, m) -> handle(ProducerTransactions.current(), m)).build();
  }

  /** Builds a {@link SagaParticipant}; not thread-safe; validated in {@link #build()}. */
  public static final class Builder {

    private final String name;
    private TxnProducer producer;
    private final Map<String, StepWork> forward = new HashMap<>();
    private final Map<String, StepWork> compensations = new HashMap<>();
    private SagaMetrics metrics = SagaMetrics.NONE;
    private Tracing tracing = Tracing.global();

    private Builder(String name) {
      this.name = name;
    }

    /** The producer whose units of work carry the work and the reply; required. */
    public Builder producer(TxnProducer producer) {
      this.producer = producer;
      return this;
    }

    /** The forward work of step {@code step}. */
    public Builder step(String step, StepWork work) {
      forward.put(Objects.requireNonNull(step, "step"), Objects.requireNonNull(work, "work"));
      return this;
    }

    /**
     * The compensation of step {@code step}. Default none: a compensation command is then answered as empty when
     * the forward work did not run here, and, when it did, as a money anomaly ({@link ParticipantOutcome#NO_UNDO}:
     * the saga stops with a ticket). A step with nothing to undo registers a compensation that does nothing.
     */
    public Builder compensation(String step, StepWork work) {
      compensations.put(Objects.requireNonNull(step, "step"), Objects.requireNonNull(work, "work"));
      return this;
    }

    /** Where to count (hanging branches refused); default nothing. */
    public Builder metrics(SagaMetrics metrics) {
      this.metrics = metrics;
      return this;
    }

    /**
     * Where the handler's spans go (default {@link Tracing#global()}): each command's processing span is a child of
     * the command's creation context, so the step's work and the reply are in the saga's trace.
     */
    public Builder tracing(Tracing tracing) {
      this.tracing = tracing;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the setting and quoting the bad value
     */
    public SagaParticipant build() {
      Require.matches("participant.name", name, SagaDefinition.NAME);
      Require.present("participant.producer", producer);
      Require.that(!forward.isEmpty(), "participant.steps", "hold at least one step", "none");
      Require.present("participant.metrics", metrics);
      Require.present("participant.tracing", tracing);
      return new SagaParticipant(this);
    }
  }
}
