package io.converge.saga.internal;

import io.converge.consumer.IncomingMessage;
import io.converge.core.Envelope;
import io.converge.saga.ReplyClass;
import io.converge.saga.SagaHeaders;
import io.converge.saga.tcc.TccHeaders;
import io.converge.saga.tcc.TccOperation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The calls of TCC branches reached over HTTP (the protocol of the module's README): a transition records the
 * intent ({@code SENT}, the attempt) and, when it runs where a call can follow its commit, adds the call here
 * ({@link #add}); the caller makes the calls after the commit ({@link #call}) and applies each answer as a reply in
 * a transaction of its own. No database transaction is open during a call. Thread-safe.
 */
final class HttpBranches {

  private static final Logger log = LoggerFactory.getLogger(HttpBranches.class);
  private static final ThreadLocal<List<Call>> COLLECTING = new ThreadLocal<>();

  /**
   * One call: the saga and step it answers, the operation, where and what.
   *
   * @param direction {@link SagaHeaders#FORWARD} (Try, Confirm) or {@link SagaHeaders#COMPENSATE} (Cancel)
   * @param trace the saga's stored trace context, the parent of the call's span (may be empty)
   */
  record Call(String sagaId, String tenant, String step, String branch, int attempt, String direction,
      TccOperation operation, URI url, byte[] payload, Duration timeout, java.util.Map<String, String> trace) {
  }

  private final HttpClient client;

  HttpBranches(HttpClient client) {
    this.client = client;
  }

  /** Whether a transition on this thread may add calls (it runs in a unit of work whose runner makes them). */
  static boolean collecting() {
    return COLLECTING.get() != null;
  }

  /** Adds a call to make after the current unit of work commits. */
  static void add(Call call) {
    COLLECTING.get().add(call);
  }

  /** Runs {@code work} collecting the calls its transitions add into {@code into}. */
  static <T> T collect(List<Call> into, java.util.concurrent.Callable<T> work) throws Exception {
    List<Call> outer = COLLECTING.get();
    COLLECTING.set(into);
    try {
      return work.call();
    } finally {
      COLLECTING.set(outer);
    }
  }

  /**
   * Makes {@code c} with the extra request headers {@code headers} (its span's {@code traceparent}) and returns its
   * answer as a reply message (never throws for an HTTP or network failure).
   */
  IncomingMessage call(Call c, java.util.Map<String, String> headers) throws InterruptedException {
    HttpRequest.Builder builder = HttpRequest.newBuilder(c.url());
    headers.forEach(builder::header);
    HttpRequest request = builder.timeout(c.timeout())
        .header(TccHeaders.GLOBAL_ID, c.sagaId()).header(TccHeaders.BRANCH_ID, c.branch())
        .header(TccHeaders.OPERATION, c.operation().wireName()).header(Envelope.TENANT, c.tenant())
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(c.payload()))
        .build();
    HttpResponse<Body> response;
    try {
      response = client.send(request, info -> new Bounded(MAX_ANSWER));
    } catch (HttpTimeoutException e) {
      return answer(c, ReplyClass.TECHNICAL_FAILURE, "TIMEOUT", null, "no answer within " + c.timeout());
    } catch (ConnectException e) {
      return answer(c, ReplyClass.TECHNICAL_FAILURE, "CONNECTION_REFUSED", null, e.toString());
    } catch (IOException e) {
      return answer(c, ReplyClass.TECHNICAL_FAILURE, "IO", null, e.toString());
    }
    int status = response.statusCode();
    String outcome = response.headers().firstValue(TccHeaders.OUTCOME).orElse(null);
    Body answer = response.body();
    String body = answer.text();
    boolean isTry = c.operation() == TccOperation.TRY;
    if (status == 200) {
      if (outcome == null || !SUCCESSES.contains(outcome)) {
        // a load balancer's page, a login page, a wrong URL: nothing says the branch ran; never a success
        return misconfigured(c, status, outcome, "HTTP 200 without " + TccHeaders.OUTCOME + " RAN, DUPLICATE or"
            + " EMPTY_ROLLBACK (" + (outcome == null ? "none" : "'" + outcome + "'") + ") from " + c.url() + ": "
            + body);
      }
      if (answer.cut()) { // the participant's result, cut: applying it would change the data with half of it
        return misconfigured(c, status, outcome, "HTTP 200 with a body above " + MAX_ANSWER + " bytes from "
            + c.url() + ": " + body);
      }
      return answer(c, ReplyClass.SUCCESS, null, outcome, body);
    }
    if (status == 409 && isTry && "HANGING_REFUSED".equals(outcome)) {
      return answer(c, ReplyClass.BUSINESS_FAILURE, "HANGING_REFUSED", outcome, body);
    }
    if (status == 422) {
      // a refused Try did nothing; a refused Confirm or Cancel breaks the TCC contract: a person must look
      return answer(c, isTry ? ReplyClass.BUSINESS_FAILURE : ReplyClass.ANOMALY, "HTTP_422", outcome, body);
    }
    if (status >= 500 && status <= 599) {
      return answer(c, ReplyClass.TECHNICAL_FAILURE, "HTTP_" + status, outcome, body);
    }
    return misconfigured(c, status, outcome, "HTTP " + status + " from " + c.url() + ": " + body);
  }

  private static IncomingMessage misconfigured(Call c, int status, String outcome, String note) {
    log.warn("TCC branch '{}' of {} answered {} with HTTP status {} ({} {}) at {}: not part of the protocol (200"
        + " with {} RAN, DUPLICATE or EMPTY_ROLLBACK, 409 HANGING_REFUSED, 422, 5xx), a misconfiguration? Counted"
        + " as a technical failure and asked again", c.branch(), c.sagaId(), c.operation().wireName(), status,
        TccHeaders.OUTCOME, outcome, c.url(), TccHeaders.OUTCOME);
    return answer(c, ReplyClass.TECHNICAL_FAILURE, MISCONFIGURED, outcome, note);
  }

  /** The {@code converge-tcc-outcome} values of a 200 that is a success. */
  private static final Set<String> SUCCESSES = Set.of("RAN", "DUPLICATE", "EMPTY_ROLLBACK");

  /** How much of an answer's body is read; the rest is discarded (the stream cancelled, the connection closed). */
  static final int MAX_ANSWER = 64 * 1024;

  /** An answer's body, at most {@link #MAX_ANSWER} bytes; {@code cut} when there was more. */
  record Body(byte[] bytes, boolean cut) {

    String text() {
      String t = new String(bytes, StandardCharsets.UTF_8);
      return cut ? t + "... [cut at " + bytes.length + " bytes]" : t;
    }
  }

  /** Reads at most {@code limit} bytes of a body, then cancels the stream (its connection is not reused). */
  static final class Bounded implements HttpResponse.BodySubscriber<Body> {

    private final int limit;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final CompletableFuture<Body> result = new CompletableFuture<>();
    private Flow.Subscription subscription;

    Bounded(int limit) {
      this.limit = limit;
    }

    @Override
    public CompletionStage<Body> getBody() {
      return result;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
      subscription = s;
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
      if (result.isDone()) {
        return;
      }
      for (ByteBuffer b : items) {
        int n = Math.min(b.remaining(), limit - out.size());
        byte[] chunk = new byte[n];
        b.get(chunk);
        out.write(chunk, 0, n);
        if (b.hasRemaining()) {
          result.complete(new Body(out.toByteArray(), true));
          subscription.cancel();
          return;
        }
      }
    }

    @Override
    public void onError(Throwable t) {
      result.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
      result.complete(new Body(out.toByteArray(), false));
    }
  }

  /** The reason of a technical failure that is an HTTP status outside the protocol. */
  static final String MISCONFIGURED = "MISCONFIGURED";

  private static IncomingMessage answer(Call c, ReplyClass outcome, String reason, String tccOutcome, String body) {
    IncomingMessage.Builder b = IncomingMessage.builder().topic("http").header(Envelope.MESSAGE_ID,
        UUID.randomUUID().toString()).header(SagaHeaders.SAGA_ID, c.sagaId()).header(SagaHeaders.STEP, c.step())
        .header(SagaHeaders.ATTEMPT, Integer.toString(c.attempt())).header(SagaHeaders.DIRECTION, c.direction())
        .header(SagaHeaders.OUTCOME, outcome.name()).payload(body == null ? "" : body);
    if (reason != null) {
      b.header(SagaHeaders.REASON, reason);
    }
    if (tccOutcome != null) {
      b.header(TccHeaders.OUTCOME, tccOutcome);
    }
    return b.build();
  }

  /** A list to collect into. */
  static List<Call> list() {
    return new ArrayList<>();
  }
}
