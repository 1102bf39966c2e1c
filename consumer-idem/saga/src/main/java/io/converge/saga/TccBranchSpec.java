package io.converge.saga;

import io.converge.saga.tcc.TccOperation;
import java.net.URI;
import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The settings of one branch of a {@link TccDefinition}, given in {@link TccDefinition.Builder#branch}: how the
 * branch is reached (by messages on a topic, or over HTTP), its payload, and how long and how often the coordinator
 * asks. Not thread-safe; validated by {@link TccDefinition.Builder#build()}.
 *
 * @param <D> the global transaction's data type
 */
public final class TccBranchSpec<D> {

  /**
   * The URLs of an HTTP branch, one per operation (the same URL three times when the operation is read from the
   * {@link io.converge.saga.tcc.TccHeaders#OPERATION} header). Immutable.
   *
   * @param tryUrl where the Try is POSTed
   * @param confirmUrl where the Confirm is POSTed
   * @param cancelUrl where the Cancel is POSTed
   */
  public record Http(URI tryUrl, URI confirmUrl, URI cancelUrl) {

    /** The URL of {@code op}. */
    public URI url(TccOperation op) {
      return switch (op) {
        case TRY -> tryUrl;
        case CONFIRM -> confirmUrl;
        case CANCEL -> cancelUrl;
      };
    }
  }

  String participant;
  String topic;
  String confirmTopic;
  String cancelTopic;
  Http http;
  Function<D, byte[]> payload;
  BiFunction<D, SagaReply, D> onTry = (d, r) -> d;
  Duration timeout = SagaStep.RemoteSpec.DEFAULT_TIMEOUT;
  RetryPolicy retry = RetryPolicy.defaults();

  TccBranchSpec() {
  }

  /** The participant (a service name; its Cancels share one rate limit); default the branch's name. */
  public TccBranchSpec<D> participant(String name) {
    this.participant = name;
    return this;
  }

  /**
   * Reaches the branch by messages on {@code topic} (Try, Confirm and Cancel alike, told apart by the
   * {@link io.converge.saga.tcc.TccHeaders#OPERATION} header). Exactly one of this and {@code http} is required.
   */
  public TccBranchSpec<D> messages(String topic) {
    this.topic = topic;
    return this;
  }

  /** The topic of the Confirms, when not the branch's topic; messages only; default the branch's topic. */
  public TccBranchSpec<D> confirmTopic(String topic) {
    this.confirmTopic = topic;
    return this;
  }

  /**
   * The topic of the Cancels, when not the branch's topic (so Cancels never queue behind Tries); messages only;
   * default the branch's topic.
   */
  public TccBranchSpec<D> cancelTopic(String topic) {
    this.cancelTopic = topic;
    return this;
  }

  /** Reaches the branch over HTTP at one URL for the three operations (the operation is in a header). */
  public TccBranchSpec<D> http(URI url) {
    return http(url, url, url);
  }

  /** Reaches the branch over HTTP, one URL per operation (absolute {@code http} or {@code https} URLs). */
  public TccBranchSpec<D> http(URI tryUrl, URI confirmUrl, URI cancelUrl) {
    this.http = new Http(tryUrl, confirmUrl, cancelUrl);
    return this;
  }

  /** The payload of the branch's calls (the same for Try, Confirm and Cancel); default the data's JSON in UTF-8. */
  public TccBranchSpec<D> payload(Function<D, byte[]> payload) {
    this.payload = payload;
    return this;
  }

  /** How a successful Try's answer changes the data; default unchanged. */
  public TccBranchSpec<D> onTry(BiFunction<D, SagaReply, D> merge) {
    this.onTry = merge;
    return this;
  }

  /**
   * How long to wait for an answer (over HTTP, the request's timeout) before asking again; 10 ms..1 day; default
   * 30 s.
   */
  public TccBranchSpec<D> timeout(Duration timeout) {
    this.timeout = timeout;
    return this;
  }

  /**
   * How often the Try is asked ({@link RetryPolicy#maxAttempts()} sends in all) and the backoff between attempts of
   * every operation; Confirm and Cancel are asked until they succeed; default {@link RetryPolicy#defaults()}.
   */
  public TccBranchSpec<D> retry(RetryPolicy retry) {
    this.retry = retry;
    return this;
  }
}
