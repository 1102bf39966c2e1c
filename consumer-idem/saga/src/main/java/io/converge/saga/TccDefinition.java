package io.converge.saga;

import io.converge.core.internal.Require;
import io.converge.producer.OutgoingMessage;
import io.converge.saga.tcc.TccOperation;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A TCC (Try-Confirm-Cancel) global transaction: named branches, each reached by messages or over HTTP, and a global
 * timeout. The saga coordinator drives it as a saga of a particular shape ({@link #saga()}): the Try of every
 * branch, one after the other in the order given; when all succeeded, the Confirm of every branch; when a Try is
 * refused or the global timeout passes, the Cancel of every branch that may have been tried, last first (the
 * refused one and one whose Try is still unanswered included: the participant's barrier turns a Cancel of a Try
 * that never ran into an empty rollback). Confirm and Cancel are asked until they succeed; the
 * {@link #ticketAfter()}-th technical failure in a row of one of them opens a ticket, and the asking goes on.
 * Immutable and thread-safe; built with {@link #builder(String, SagaCodec)}, validated in {@link Builder#build()}.
 *
 * <pre>{@code
 * TccDefinition<String> transfer = TccDefinition.builder("transfer", SagaCodec.json())
 *     .branch("account", b -> b.messages("account-tcc").timeout(Duration.ofSeconds(5)))
 *     .branch("points", b -> b.http(URI.create("http://points:8080/tcc")))
 *     .globalTimeout(Duration.ofSeconds(30))
 *     .build();
 * coordinator.start(transfer, transferId, json);
 * }</pre>
 *
 * @param <D> the global transaction's data type
 */
public final class TccDefinition<D> {

  /** The default global timeout. */
  public static final Duration DEFAULT_GLOBAL_TIMEOUT = Duration.ofMinutes(1);
  /** The default number of technical failures in a row of one Confirm or Cancel before a ticket. */
  public static final int DEFAULT_TICKET_AFTER = 3;
  /** What separates a branch's name from the Confirm in the name of its Confirm step ({@code account/confirm}). */
  public static final String CONFIRM_SUFFIX = "/confirm";

  private final SagaDefinition<D> saga;
  private final List<String> branches;

  private TccDefinition(SagaDefinition<D> saga, List<String> branches) {
    this.saga = saga;
    this.branches = List.copyOf(branches);
  }

  /** A builder for the global transaction {@code name} whose data {@code codec} turns into JSON. */
  public static <D> Builder<D> builder(String name, SagaCodec<D> codec) {
    return new Builder<>(name, codec);
  }

  /** The name (stored in {@code converge_saga.definition}). */
  public String name() {
    return saga.name();
  }

  /** The branch names in order, unmodifiable. */
  public List<String> branches() {
    return branches;
  }

  /** How long the Try phase may run: past it, the coordinator cancels. */
  public Duration globalTimeout() {
    return saga.deadline();
  }

  /** Technical failures in a row of one Confirm or Cancel before a ticket is opened (the asking goes on). */
  public int ticketAfter() {
    return saga.compensationAttempts();
  }

  /**
   * The saga the coordinator drives: step {@code i} is the Try of branch {@code i} (compensated by its Cancel),
   * step {@code n + i} the Confirm of branch {@code i}, named {@code <branch>}{@value #CONFIRM_SUFFIX}.
   */
  public SagaDefinition<D> saga() {
    return saga;
  }

  @Override
  public String toString() {
    return "TccDefinition[" + name() + ", branches=" + branches + "]";
  }

  /**
   * Builds a {@link TccDefinition}. Not thread-safe; defaults are applied and everything is validated in
   * {@link #build()}.
   *
   * @param <D> the data type
   */
  public static final class Builder<D> {

    private final String name;
    private final SagaCodec<D> codec;
    private final List<String> names = new ArrayList<>();
    private final List<TccBranchSpec<D>> specs = new ArrayList<>();
    private Duration globalTimeout = DEFAULT_GLOBAL_TIMEOUT;
    private int ticketAfter = DEFAULT_TICKET_AFTER;

    private Builder(String name, SagaCodec<D> codec) {
      this.name = name;
      this.codec = codec;
    }

    /** Adds the branch {@code branchName} (its {@link io.converge.saga.tcc.TccHeaders#BRANCH_ID}). */
    public Builder<D> branch(String branchName, Consumer<TccBranchSpec<D>> spec) {
      TccBranchSpec<D> b = new TccBranchSpec<>();
      Objects.requireNonNull(spec, "spec").accept(b);
      names.add(branchName);
      specs.add(b);
      return this;
    }

    /** How long the Try phase may run before every branch tried is cancelled; 1 s..30 days; default 1 min. */
    public Builder<D> globalTimeout(Duration timeout) {
      this.globalTimeout = timeout;
      return this;
    }

    /** Technical failures in a row of one Confirm or Cancel before a ticket; 1..100; default 3. */
    public Builder<D> ticketAfter(int failures) {
      this.ticketAfter = failures;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the property (e.g. {@code tcc.branches[1].url.try}) and quoting the
     *     bad value
     * @throws NullPointerException naming a missing required property
     */
    public TccDefinition<D> build() {
      named("tcc.name", name);
      Require.present("tcc.codec", codec);
      Require.that(!specs.isEmpty(), "tcc.branches", "hold at least one branch", "none");
      Require.between("tcc.globalTimeout", globalTimeout, Duration.ofSeconds(1), Duration.ofDays(30),
          "1 s and 30 days");
      Require.between("tcc.ticketAfter", ticketAfter, 1, 100);
      Set<String> unique = new HashSet<>();
      List<SagaStep<D>> tries = new ArrayList<>();
      List<SagaStep<D>> confirms = new ArrayList<>();
      for (int i = 0; i < specs.size(); i++) {
        String p = "tcc.branches[" + i + "]";
        String branch = named(p + ".name", names.get(i));
        Require.that(unique.add(branch), p + ".name", "be unique in '" + name + "'", "'" + branch + "'");
        TccBranchSpec<D> b = specs.get(i);
        String participant = named(p + ".participant", b.participant == null ? branch : b.participant);
        Require.that((b.topic == null) != (b.http == null), p, "be reached by messages or over HTTP (exactly one)",
            b.topic == null ? "neither" : "both");
        if (b.http != null) {
          Require.that(b.confirmTopic == null && b.cancelTopic == null, p, "have no topics when over HTTP",
              "'" + b.confirmTopic + "', '" + b.cancelTopic + "'");
          for (TccOperation op : TccOperation.values()) {
            url(p + ".url." + op.wireName(), b.http.url(op));
          }
        } else {
          topic(p + ".topic", b.topic);
          if (b.confirmTopic != null) {
            topic(p + ".confirmTopic", b.confirmTopic);
          }
          if (b.cancelTopic != null) {
            topic(p + ".cancelTopic", b.cancelTopic);
          }
        }
        Require.present(p + ".onTry", b.onTry);
        Require.between(p + ".timeout", b.timeout, Duration.ofMillis(10), Duration.ofDays(1), "10 ms and 1 day");
        Require.present(p + ".retry", b.retry);
        java.util.function.Function<D, byte[]> payload = b.payload != null ? b.payload
            : d -> codec.encode(d).getBytes(StandardCharsets.UTF_8);
        SagaStep.RemoteSpec<D> t = remote(b, participant, payload);
        t.commandTopic = b.topic;
        t.compensationTopic = b.topic == null ? null : b.cancelTopic != null ? b.cancelTopic : b.topic;
        t.compensation = payload;
        t.onSuccess = b.onTry;
        tries.add(new SagaStep<>(branch, SagaStep.Kind.REMOTE, t, null, null, branch, TccOperation.TRY, b.http));
        SagaStep.RemoteSpec<D> c = remote(b, participant, payload);
        c.commandTopic = b.topic == null ? null : b.confirmTopic != null ? b.confirmTopic : b.topic;
        confirms.add(new SagaStep<>(branch + CONFIRM_SUFFIX, SagaStep.Kind.REMOTE, c, null, null, branch,
            TccOperation.CONFIRM, b.http));
      }
      List<SagaStep<D>> steps = new ArrayList<>(tries);
      steps.addAll(confirms);
      // a Cancel waits for its answer as long as its branch's Try does (Transitions takes the branch's timeout)
      return new TccDefinition<>(new SagaDefinition<>(name, codec, steps, globalTimeout, ticketAfter,
          SagaStep.RemoteSpec.DEFAULT_TIMEOUT, specs.size()), names);
    }

    private static <D> SagaStep.RemoteSpec<D> remote(TccBranchSpec<D> b, String participant,
        java.util.function.Function<D, byte[]> payload) {
      SagaStep.RemoteSpec<D> r = new SagaStep.RemoteSpec<>();
      r.participant = participant;
      r.command = payload;
      r.timeout = b.timeout;
      r.retry = b.retry;
      return r;
    }

    private static String named(String property, String name) {
      Require.that(name != null && SagaDefinition.NAME.matcher(name).matches(), property,
          "match " + SagaDefinition.NAME.pattern(), name == null ? null : "'" + name + "'");
      return name;
    }

    private static void topic(String property, String topic) {
      Require.that(topic != null && OutgoingMessage.TOPIC.matcher(topic).matches(), property,
          "match " + OutgoingMessage.TOPIC.pattern(), topic == null ? null : "'" + topic + "'");
    }

    private static void url(String property, URI url) {
      Require.that(url != null && url.isAbsolute() && url.getHost() != null
          && ("http".equals(url.getScheme()) || "https".equals(url.getScheme())), property,
          "be an absolute http or https URL", url == null ? null : "'" + url + "'");
    }
  }
}
