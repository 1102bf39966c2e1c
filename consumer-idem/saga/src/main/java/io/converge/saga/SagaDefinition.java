package io.converge.saga;

import io.converge.core.internal.Require;
import io.converge.producer.OutgoingMessage;
import io.converge.saga.tcc.TccOperation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * What a saga does: its name, its typed data (through a {@link SagaCodec}), its steps in order, and the deadline
 * after which it compensates. Immutable and thread-safe; built with {@link #builder(String, SagaCodec)} and
 * validated in {@link Builder#build()}.
 *
 * <pre>{@code
 * SagaDefinition<String> order = SagaDefinition.builder("order", SagaCodec.json())
 *     .remote("reserve-stock", s -> s.participant("inventory")
 *         .command("inventory-commands", SagaCodec::utf8)
 *         .compensation("inventory-compensations", SagaCodec::utf8)
 *         .timeout(Duration.ofSeconds(10)))
 *     .remote("debit", s -> s.participant("account").command("account-commands", SagaCodec::utf8))
 *     .local("mark-paid", (connection, data) -> markPaid(connection, data))
 *     .deadline(Duration.ofMinutes(5))
 *     .build();
 * }</pre>
 *
 * @param <D> the saga's data type
 */
public final class SagaDefinition<D> {

  /** Names of sagas and steps: letters, digits, '_', '-', '.', at most 64. */
  public static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
  /** The default deadline of a saga. */
  public static final Duration DEFAULT_DEADLINE = Duration.ofHours(1);
  /** The default number of failed sends of one compensation before the saga needs a person. */
  public static final int DEFAULT_COMPENSATION_ATTEMPTS = 3;

  private final String name;
  private final SagaCodec<D> codec;
  private final List<SagaStep<D>> steps;
  private final Duration deadline;
  private final int compensationAttempts;
  private final Duration compensationTimeout;
  private final int tccBranches;

  private SagaDefinition(Builder<D> b, List<SagaStep<D>> steps) {
    this(b.name, b.codec, steps, b.deadline, b.compensationAttempts, b.compensationTimeout, 0);
  }

  /** The saga shape of a {@link TccDefinition}: its Try steps, then its Confirm steps. */
  SagaDefinition(String name, SagaCodec<D> codec, List<SagaStep<D>> steps, Duration deadline,
      int compensationAttempts, Duration compensationTimeout, int tccBranches) {
    this.name = name;
    this.codec = codec;
    this.steps = List.copyOf(steps);
    this.deadline = deadline;
    this.compensationAttempts = compensationAttempts;
    this.compensationTimeout = compensationTimeout;
    this.tccBranches = tccBranches;
  }

  /** A builder for the saga {@code name} whose data {@code codec} turns into JSON. */
  public static <D> Builder<D> builder(String name, SagaCodec<D> codec) {
    return new Builder<>(name, codec);
  }

  /** The saga's name (stored in {@code converge_saga.definition}). */
  public String name() {
    return name;
  }

  /** The data codec. */
  public SagaCodec<D> codec() {
    return codec;
  }

  /** The steps in forward order, unmodifiable. */
  public List<SagaStep<D>> steps() {
    return steps;
  }

  /** The step at {@code index}. */
  public SagaStep<D> step(int index) {
    return steps.get(index);
  }

  /** How long a saga may run forward: past it, the coordinator stops asking and compensates. */
  public Duration deadline() {
    return deadline;
  }

  /** Failed sends of one compensation before the saga goes to {@code COMPENSATION_FAILED} with a ticket. */
  public int compensationAttempts() {
    return compensationAttempts;
  }

  /** How long to wait for a compensation's reply before counting a failed send and asking again. */
  public Duration compensationTimeout() {
    return compensationTimeout;
  }

  /**
   * The number of branches when this is the saga shape of a {@link TccDefinition} (its steps are then the Try of each
   * branch, compensated by its Cancel, followed by the Confirm of each branch), else 0.
   */
  public int tccBranches() {
    return tccBranches;
  }

  /** Whether this is the saga shape of a {@link TccDefinition}. */
  public boolean tcc() {
    return tccBranches > 0;
  }

  @Override
  public String toString() {
    return (tcc() ? "TccDefinition[" : "SagaDefinition[") + name + ", steps=" + steps + "]";
  }

  /**
   * Builds a {@link SagaDefinition}. Not thread-safe; defaults are applied and everything is validated in
   * {@link #build()}.
   *
   * @param <D> the saga's data type
   */
  public static final class Builder<D> {

    private final String name;
    private final SagaCodec<D> codec;
    private final List<Object[]> steps = new ArrayList<>();
    private Duration deadline = DEFAULT_DEADLINE;
    private int compensationAttempts = DEFAULT_COMPENSATION_ATTEMPTS;
    private Duration compensationTimeout = SagaStep.RemoteSpec.DEFAULT_TIMEOUT;

    private Builder(String name, SagaCodec<D> codec) {
      this.name = name;
      this.codec = codec;
    }

    /** Adds a remote step named {@code stepName}, configured by {@code spec}. */
    public Builder<D> remote(String stepName, Consumer<SagaStep.RemoteSpec<D>> spec) {
      SagaStep.RemoteSpec<D> r = new SagaStep.RemoteSpec<>();
      Objects.requireNonNull(spec, "spec").accept(r);
      steps.add(new Object[]{stepName, SagaStep.Kind.REMOTE, r, null, null});
      return this;
    }

    /** Adds a local step without compensation. */
    public Builder<D> local(String stepName, LocalAction<D> action) {
      return local(stepName, action, null);
    }

    /** Adds a local step with its compensation ({@code undo} may be null). */
    public Builder<D> local(String stepName, LocalAction<D> action, LocalAction<D> undo) {
      steps.add(new Object[]{stepName, SagaStep.Kind.LOCAL, null, action, undo});
      return this;
    }

    /** How long a saga may run forward before it compensates; 1 s..30 days; default 1 h. */
    public Builder<D> deadline(Duration deadline) {
      this.deadline = deadline;
      return this;
    }

    /** Failed sends of one compensation before a ticket; 1..100; default 3. */
    public Builder<D> compensationAttempts(int attempts) {
      this.compensationAttempts = attempts;
      return this;
    }

    /** The wait for a compensation's reply; 10 ms..1 day; default 30 s. */
    public Builder<D> compensationTimeout(Duration timeout) {
      this.compensationTimeout = timeout;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the property (e.g. {@code saga.steps[1].commandTopic}) and quoting
     *     the bad value
     * @throws NullPointerException naming a missing required property
     */
    @SuppressWarnings("unchecked")
    public SagaDefinition<D> build() {
      Require.matches("saga.name", name, NAME);
      Require.present("saga.codec", codec);
      Require.that(!steps.isEmpty(), "saga.steps", "hold at least one step", "none");
      Require.between("saga.deadline", deadline, Duration.ofSeconds(1), Duration.ofDays(30), "1 s and 30 days");
      Require.between("saga.compensationAttempts", compensationAttempts, 1, 100);
      timeout("saga.compensationTimeout", compensationTimeout);
      Set<String> names = new HashSet<>();
      List<SagaStep<D>> built = new ArrayList<>();
      for (int i = 0; i < steps.size(); i++) {
        Object[] s = steps.get(i);
        String p = "saga.steps[" + i + "]";
        String stepName = Require.matches(p + ".name", (String) s[0], NAME);
        Require.that(names.add(stepName), p + ".name", "be unique in saga '" + name + "'", "'" + stepName + "'");
        if (s[1] == SagaStep.Kind.REMOTE) {
          SagaStep.RemoteSpec<D> r = (SagaStep.RemoteSpec<D>) s[2];
          Require.matches(p + ".participant", r.participant, NAME);
          topic(p + ".commandTopic", r.commandTopic);
          Require.present(p + ".command", r.command);
          if (r.compensation != null || r.compensationTopic != null) {
            topic(p + ".compensationTopic", r.compensationTopic);
            Require.present(p + ".compensation", r.compensation);
            Require.that(!r.compensationTopic.equals(r.commandTopic), p + ".compensationTopic",
                "differ from the command topic (compensations must not queue behind forward commands)",
                "'" + r.compensationTopic + "'");
          }
          Require.present(p + ".onSuccess", r.onSuccess);
          Require.present(p + ".classifier", r.classifier);
          timeout(p + ".timeout", r.timeout);
          Require.present(p + ".retry", r.retry);
          if (r.operation != null) {
            tccStep(p, r, built);
          }
          built.add(new SagaStep<>(stepName, SagaStep.Kind.REMOTE, r, null, null, r.branch, r.operation, null));
        } else {
          Require.present(p + ".action", s[3]);
          built.add(new SagaStep<>(stepName, SagaStep.Kind.LOCAL, null, (LocalAction<D>) s[3], (LocalAction<D>) s[4]));
        }
      }
      return new SagaDefinition<>(this, built);
    }

    /** A TCC step of a saga: a Try has its Cancel; a Confirm has none and follows its branch's Try. */
    private static <D> void tccStep(String p, SagaStep.RemoteSpec<D> r, List<SagaStep<D>> before) {
      Require.matches(p + ".branch", r.branch, NAME);
      boolean tried = before.stream().anyMatch(s -> r.branch.equals(s.branch()) && s.operation() == TccOperation.TRY);
      if (r.operation == TccOperation.TRY) {
        Require.that(r.compensation != null, p + ".compensation", "be the Cancel of branch '" + r.branch + "'",
            "none");
        Require.that(!tried, p + ".branch", "be tried once in a saga", "'" + r.branch + "'");
      } else {
        Require.that(r.compensation == null, p + ".compensation", "be none for a Confirm", "'"
            + r.compensationTopic + "'");
        Require.that(tried, p + ".branch", "be tried by an earlier step", "'" + r.branch + "'");
      }
    }

    private static void topic(String property, String topic) {
      Require.that(topic != null && OutgoingMessage.TOPIC.matcher(topic).matches(), property,
          "match " + OutgoingMessage.TOPIC.pattern(), topic == null ? null : "'" + topic + "'");
    }

    private static void timeout(String property, Duration timeout) {
      Require.between(property, timeout, Duration.ofMillis(10), Duration.ofDays(1), "10 ms and 1 day");
    }
  }
}
