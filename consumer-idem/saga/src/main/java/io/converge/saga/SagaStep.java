package io.converge.saga;

import io.converge.saga.tcc.TccOperation;
import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * One step of a {@link SagaDefinition}: a remote step sends a command to a participant's topic and waits for its
 * reply; a local step runs in the coordinator's own transaction. Either may have a compensation. Immutable; built
 * through {@link SagaDefinition.Builder#remote} and {@link SagaDefinition.Builder#local}.
 *
 * @param <D> the saga's data type
 */
public final class SagaStep<D> {

  /** Whether a step talks to a participant or runs in the coordinator. */
  public enum Kind {
    /** A command to a participant's topic; a reply is expected. */
    REMOTE,
    /** Runs in the coordinator's transaction. */
    LOCAL
  }

  private final String name;
  private final Kind kind;
  private final String participant;
  private final String commandTopic;
  private final String compensationTopic;
  private final Function<D, byte[]> command;
  private final Function<D, byte[]> compensation;
  private final BiFunction<D, SagaReply, D> onSuccess;
  private final ReplyClassifier classifier;
  private final Duration timeout;
  private final RetryPolicy retry;
  private final LocalAction<D> action;
  private final LocalAction<D> undo;
  private final String branch;
  private final TccOperation operation;
  private final TccBranchSpec.Http http;

  SagaStep(String name, Kind kind, RemoteSpec<D> r, LocalAction<D> action, LocalAction<D> undo) {
    this(name, kind, r, action, undo, null, null, null);
  }

  /** A step of a TCC shape ({@link TccDefinition}): the Try or the Confirm of {@code branch}. */
  SagaStep(String name, Kind kind, RemoteSpec<D> r, LocalAction<D> action, LocalAction<D> undo, String branch,
      TccOperation operation, TccBranchSpec.Http http) {
    this.name = name;
    this.kind = kind;
    this.participant = r == null ? null : r.participant;
    this.commandTopic = r == null ? null : r.commandTopic;
    this.compensationTopic = r == null ? null : r.compensationTopic;
    this.command = r == null ? null : r.command;
    this.compensation = r == null ? null : r.compensation;
    this.onSuccess = r == null ? null : r.onSuccess;
    this.classifier = r == null ? null : r.classifier;
    this.timeout = r == null ? null : r.timeout;
    this.retry = r == null ? null : r.retry;
    this.action = action;
    this.undo = undo;
    this.branch = branch;
    this.operation = operation;
    this.http = http;
  }

  /** The step's name, unique in its saga. */
  public String name() {
    return name;
  }

  /** Remote or local. */
  public Kind kind() {
    return kind;
  }

  /** Whether the step has a compensation. */
  public boolean compensable() {
    return kind == Kind.REMOTE ? compensation != null : undo != null;
  }

  /** The participant's name (the rate limit of its compensations is kept per participant); remote steps only. */
  public String participant() {
    return participant;
  }

  /** Where the forward command goes; remote steps only. */
  public String commandTopic() {
    return commandTopic;
  }

  /** Where the compensation command goes (a topic of its own, so compensations never queue behind forward work). */
  public String compensationTopic() {
    return compensationTopic;
  }

  /** The forward command's payload for {@code data}. */
  public byte[] command(D data) {
    return command.apply(data);
  }

  /** The compensation command's payload for {@code data}. */
  public byte[] compensation(D data) {
    return compensation.apply(data);
  }

  /** The saga's data after a successful reply. */
  public D onSuccess(D data, SagaReply reply) {
    return onSuccess.apply(data, reply);
  }

  /** How replies are classified. */
  public ReplyClassifier classifier() {
    return classifier;
  }

  /** How long to wait for a reply before asking again (same command id). */
  public Duration timeout() {
    return timeout;
  }

  /** How often to ask. */
  public RetryPolicy retry() {
    return retry;
  }

  /** A local step's work. */
  public LocalAction<D> action() {
    return action;
  }

  /** A local step's compensation, or null. */
  public LocalAction<D> undo() {
    return undo;
  }

  /** The TCC branch this step calls (its {@link io.converge.saga.tcc.TccHeaders#BRANCH_ID}), or null for a saga step. */
  public String branch() {
    return branch;
  }

  /**
   * Whether the coordinator sends this step's commands only while the saga is younger than the participants'
   * retention ({@link SagaBranchRetention#maySend}): a {@link SagaParticipant}'s step (remote, no TCC branch), whose
   * rows the participant purges. A TCC branch's barrier keeps an unfinished branch's rows, and a local step sends
   * nothing.
   */
  public boolean boundByRetention() {
    return kind == Kind.REMOTE && branch == null;
  }

  /**
   * The TCC operation of this step's forward command ({@link TccOperation#TRY} or {@link TccOperation#CONFIRM}; its
   * compensation is always {@link TccOperation#CANCEL}), or null for a saga step.
   */
  public TccOperation operation() {
    return operation;
  }

  /** Whether this step is the Confirm of a TCC branch (retried until it succeeds; no deadline applies). */
  public boolean confirm() {
    return operation == TccOperation.CONFIRM;
  }

  /** The URL of {@code op} of an HTTP branch, or null for a step reached by messages. */
  public java.net.URI url(TccOperation op) {
    return http == null ? null : http.url(op);
  }

  /** Whether the step's branch is reached over HTTP. */
  public boolean overHttp() {
    return http != null;
  }

  @Override
  public String toString() {
    return "SagaStep[" + name + ", " + kind + (participant == null ? "" : ", participant=" + participant) + "]";
  }

  /**
   * The settings of a remote step, given in {@link SagaDefinition.Builder#remote}. Not thread-safe; validated
   * by {@link SagaDefinition.Builder#build()}.
   *
   * @param <D> the saga's data type
   */
  public static final class RemoteSpec<D> {

    /** The default wait for a reply. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    String participant;
    String commandTopic;
    String compensationTopic;
    Function<D, byte[]> command;
    Function<D, byte[]> compensation;
    BiFunction<D, SagaReply, D> onSuccess = (d, r) -> d;
    ReplyClassifier classifier = ReplyClassifier.byOutcomeHeader();
    Duration timeout = DEFAULT_TIMEOUT;
    RetryPolicy retry = RetryPolicy.defaults();
    String branch;
    TccOperation operation;

    RemoteSpec() {
    }

    /**
     * Makes this step the Try of the TCC branch {@code branch} of its participant (a
     * {@link io.converge.saga.tcc.TccParticipant}): its command carries the {@link io.converge.saga.tcc.TccHeaders}
     * (global id = the saga id, operation {@code try}), and its compensation, required, is the branch's Cancel
     * (operation {@code cancel}). A refused Try is not cancelled (it left nothing: the barrier's row rolled back with
     * it). Default: a plain saga step.
     */
    public RemoteSpec<D> tccTry(String branch) {
      this.branch = branch;
      this.operation = TccOperation.TRY;
      return this;
    }

    /**
     * Makes this step the Confirm of the TCC branch {@code branch}, whose Try is an earlier step: its command carries
     * the {@link io.converge.saga.tcc.TccHeaders} (operation {@code confirm}); it has no compensation, the saga's
     * deadline does not apply to it, and it is asked until it succeeds (a failure answer or no answer within the
     * timeout is asked again after the backoff; the saga's {@code compensationAttempts}-th failure in a row opens a
     * {@code CONFIRM_FAILING} ticket); a refusal is an anomaly (the saga stops with a ticket). Default: a plain saga
     * step.
     */
    public RemoteSpec<D> tccConfirm(String branch) {
      this.branch = branch;
      this.operation = TccOperation.CONFIRM;
      return this;
    }

    /** The participant (a service name); required. Its compensations share one rate limit. */
    public RemoteSpec<D> participant(String name) {
      this.participant = name;
      return this;
    }

    /** The forward command's topic and payload; required. */
    public RemoteSpec<D> command(String topic, Function<D, byte[]> payload) {
      this.commandTopic = topic;
      this.command = payload;
      return this;
    }

    /** The compensation's topic and payload; default none (the step needs no undoing). */
    public RemoteSpec<D> compensation(String topic, Function<D, byte[]> payload) {
      this.compensationTopic = topic;
      this.compensation = payload;
      return this;
    }

    /** How a success reply changes the saga's data; default unchanged. */
    public RemoteSpec<D> onSuccess(BiFunction<D, SagaReply, D> merge) {
      this.onSuccess = merge;
      return this;
    }

    /** The reply classifier; default {@link ReplyClassifier#byOutcomeHeader()}. */
    public RemoteSpec<D> classifier(ReplyClassifier classifier) {
      this.classifier = classifier;
      return this;
    }

    /** How long to wait for a reply before asking again; 10 ms..1 day; default 30 s. */
    public RemoteSpec<D> timeout(Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    /** How often to ask; default {@link RetryPolicy#defaults()}. */
    public RemoteSpec<D> retry(RetryPolicy retry) {
      this.retry = retry;
      return this;
    }
  }
}
