package io.converge.saga.tcc;

import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.core.internal.Require;
import io.converge.core.tracing.Tracing;
import io.converge.producer.TxnContext;
import io.converge.producer.TxnProducer;
import io.converge.saga.ReplyClass;
import io.converge.saga.SagaDefinition;
import io.converge.saga.internal.ProducerTransactions;
import io.converge.saga.tcc.internal.TccCommands;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The participant's side of TCC branches reached by messages: the coordinator sends saga commands (the
 * {@link io.converge.saga.SagaHeaders}) carrying {@link TccHeaders#GLOBAL_ID}, {@link TccHeaders#BRANCH_ID} and
 * {@link TccHeaders#OPERATION} (the tenant is {@link io.converge.core.Envelope#TENANT}). Each command runs the
 * registered Try, Confirm or Cancel work of its step (dispatched on the operation header, not on the saga direction)
 * through the {@link TccBarrier}, and publishes its reply, in one unit of work of the participant's
 * {@link TxnProducer}: the work, the barrier row and the reply commit together.
 *
 * <p>The reply goes to {@link io.converge.saga.SagaHeaders#REPLY_TO}, copies the command's saga id, step, attempt,
 * direction, command id and TCC headers, and carries {@link TccHeaders#OUTCOME} (the barrier's outcome) and
 * {@link io.converge.saga.SagaHeaders#OUTCOME}: {@code SUCCESS} for {@code RAN}, {@code DUPLICATE} (the stored result
 * replied again) and {@code EMPTY_ROLLBACK}; {@code BUSINESS_FAILURE} with reason {@code HANGING_REFUSED} for a
 * refused hanging Try, or with the exception's reason code for a Try that refused (a
 * {@link io.converge.consumer.BusinessException}; nothing stored); {@code TECHNICAL_FAILURE} for any other exception
 * (nothing stored; a Confirm without its Try has reason {@link ConfirmWithoutTryException#REASON}; a row lock not
 * granted within the lock timeout, {@code SET LOCAL lock_timeout} of the unit, default
 * {@link #DEFAULT_LOCK_TIMEOUT}, is one too); {@code ANOMALY} with reason
 * {@link CancelAfterConfirmException#REASON} or {@link ConfirmAfterCancelException#REASON} for a Cancel of a branch
 * confirmed here or a Confirm of a branch cancelled here (nothing ran, nothing stored).
 *
 * <p>Bind {@link #handler(String)} to the consumers of the branch's command topics. Apply
 * {@code Migrations.apply(dataSource, "tcc")} and {@code Migrations.apply(dataSource, "consumer")} to the
 * participant's database. Thread-safe.
 */
public final class TccParticipant {

  /** The default lock timeout of a command's unit of work: 5 s. */
  public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(5);

  private final String name;
  private final TxnProducer producer;
  private final TccCommands commands;
  private final Tracing tracing;

  private TccParticipant(Builder b) {
    this.name = b.name;
    this.producer = b.producer;
    this.tracing = b.tracing;
    this.commands = new TccCommands(name, b.barrier, b.branches, b.lockTimeout);
  }

  /** A builder for the participant {@code name} (used in logs and refusals). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** The participant's name. */
  public String name() {
    return name;
  }

  /**
   * Handles one branch command inside {@code tx} (a unit of work of the participant's producer): runs the operation
   * through the barrier and publishes the reply.
   *
   * @return the class of the reply published
   * @throws io.converge.consumer.BusinessException when the message is not a TCC branch command (missing or
   *     malformed saga or TCC headers) or names a step this participant does not serve
   */
  public ReplyClass handle(TxnContext tx, IncomingMessage command) throws Exception {
    return commands.handle(tx, command);
  }

  /**
   * An {@link IdempotentHandler} for the consumers of this participant's branch command topics: broker redeliveries
   * of one send are deduplicated in {@code group}; a re-send by the coordinator is answered from the barrier.
   */
  public IdempotentHandler handler(String group) {
    return handler(group, FailurePolicy.defaults());
  }

  /** As {@link #handler(String)}, with a failure policy for the handler. */
  public IdempotentHandler handler(String group, FailurePolicy policy) {
    return IdempotentHandler.builder().group(group).transactions(new ProducerTransactions(producer)).policy(policy)
        .tracing(tracing).traceAsParent(true).handler((c, m) -> handle(ProducerTransactions.current(), m)).build();
  }

  /** The work of one branch's three operations. */
  public record Branch(TccWork onTry, TccWork onConfirm, TccWork onCancel) {

    /** Rejects nulls. */
    public Branch {
      Objects.requireNonNull(onTry, "onTry");
      Objects.requireNonNull(onConfirm, "onConfirm");
      Objects.requireNonNull(onCancel, "onCancel");
    }

    /** The work of {@code operation}. */
    public TccWork work(TccOperation operation) {
      return switch (operation) {
        case TRY -> onTry;
        case CONFIRM -> onConfirm;
        case CANCEL -> onCancel;
      };
    }
  }

  /** Builds a {@link TccParticipant}; not thread-safe; validated in {@link #build()}. */
  public static final class Builder {

    private final String name;
    private TxnProducer producer;
    private TccBarrier barrier;
    private final Map<String, Branch> branches = new HashMap<>();
    private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
    private Tracing tracing = Tracing.global();

    private Builder(String name) {
      this.name = name;
    }

    /** The producer whose units of work carry the work, the barrier rows and the reply; required. */
    public Builder producer(TxnProducer producer) {
      this.producer = producer;
      return this;
    }

    /**
     * Where the handler's spans go (default {@link Tracing#global()}): each branch command's processing span is a
     * child of the command's creation context, so the Try, Confirm or Cancel and the reply are in the transaction's
     * trace (as a {@code SagaParticipant}'s steps are in the saga's).
     */
    public Builder tracing(Tracing tracing) {
      this.tracing = Objects.requireNonNull(tracing, "tracing");
      return this;
    }

    /** The barrier; default {@code TccBarrier.builder().build()} (no metrics). */
    public Builder barrier(TccBarrier barrier) {
      this.barrier = barrier;
      return this;
    }

    /**
     * The Try, Confirm and Cancel work of branch {@code branchId}: the commands whose {@link TccHeaders#BRANCH_ID} is
     * {@code branchId} (the coordinator's branch name), whatever saga step carries them.
     */
    public Builder branch(String branchId, TccWork onTry, TccWork onConfirm, TccWork onCancel) {
      branches.put(Objects.requireNonNull(branchId, "branchId"), new Branch(onTry, onConfirm, onCancel));
      return this;
    }

    /**
     * How long a statement of a command's unit waits for a row lock ({@code SET LOCAL lock_timeout}) before the
     * command is replied {@code TECHNICAL_FAILURE} (nothing stored); 1 ms..10 min, default
     * {@link #DEFAULT_LOCK_TIMEOUT}.
     */
    public Builder lockTimeout(Duration lockTimeout) {
      this.lockTimeout = lockTimeout;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the setting and quoting the bad value
     */
    public TccParticipant build() {
      Require.matches("tcc.participant.name", name, SagaDefinition.NAME);
      Require.present("tcc.participant.producer", producer);
      Require.between("tcc.participant.lockTimeout", lockTimeout, Duration.ofMillis(1), Duration.ofMinutes(10),
          "1 ms and 10 min");
      Require.that(!branches.isEmpty(), "tcc.participant.branches", "hold at least one branch", "none");
      if (barrier == null) {
        barrier = TccBarrier.builder().build();
      }
      return new TccParticipant(this);
    }
  }
}
